print("rehearse")
