# Writes bundle archives a hostile repository could serve: python's tarfile makes the entries
# rehearse must refuse. Usage: hostile_tar.py KIND OUT.tar
import io, sys, tarfile

kind, out = sys.argv[1], sys.argv[2]
manifest = b'{"name": "evil", "version": "1.0.0", "api": "^1", "description": "x", "exports": {}}'

def add(tar, name, data=b"", type_=tarfile.REGTYPE, link=""):
    info = tarfile.TarInfo(name)
    info.type = type_
    info.size = len(data) if type_ == tarfile.REGTYPE else 0
    info.linkname = link
    tar.addfile(info, io.BytesIO(data) if type_ == tarfile.REGTYPE else None)

with tarfile.open(out, "w", format=tarfile.USTAR_FORMAT) as tar:
    add(tar, "evil-1.0.0/rehearse-plugin.json", manifest)
    if kind == "dotdot":
        add(tar, "evil-1.0.0/../../escape.lua", b"return {}")
    elif kind == "absolute":
        add(tar, "/tmp/escape.lua", b"return {}")
    elif kind == "symlink":
        add(tar, "evil-1.0.0/init.lua", type_=tarfile.SYMTYPE, link="/etc/passwd")
    elif kind == "fileanddir":
        add(tar, "evil-1.0.0/init.lua", b"return {}")
        add(tar, "evil-1.0.0/x", b"a file")
        add(tar, "evil-1.0.0/x/y", b"and a file below it")
    elif kind == "hidden":
        add(tar, "evil-1.0.0/init.lua", b"return {}")
        add(tar, "evil-1.0.0/.hidden.lua", b"return {}")
    elif kind == "huge":
        add(tar, "evil-1.0.0/init.lua", b"-" * (5 << 20))
