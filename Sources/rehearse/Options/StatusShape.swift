import ArgumentParser

/// The two JSON shapes of a rolling upgrade's status.
enum StatusShape: String, ExpressibleByArgument, CaseIterable {
    case az, rest
}
