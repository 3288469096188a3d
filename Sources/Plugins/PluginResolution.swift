/// Why the resolver chose no version of a bundle, as data (the problem's sentence says the same).
public indirect enum PluginResolution: Equatable, Sendable {
    /// No version of `name` is where the search looked.
    case missing(name: String)
    /// `by` needs `name` in `range`, but `chosen` (a label, `name version`) was chosen before.
    case conflict(name: String, chosen: String, by: String, range: String)
    /// The search tried this many versions and gave up.
    case gaveUp(tries: Int)
    /// Every version of `name` found was turned down, each for its reasons, newest first.
    case noVersionFits(name: String, [TurnedDown])

    /// One version turned down: its label (`name version`), its folder, and why.
    public struct TurnedDown: Equatable, Sendable {
        public var label: String
        public var folder: String
        public var reasons: [Reason]

        /// Version `label` in `folder`, turned down for `reasons`.
        public init(label: String, folder: String, reasons: [Reason]) {
            self.label = label
            self.folder = folder
            self.reasons = reasons
        }
    }

    /// Why a version was turned down.
    public indirect enum Reason: Equatable, Sendable {
        /// It declares host API `needs`; this rehearse provides `provides`.
        case hostAPI(needs: String, provides: String)
        /// The lock file pins another version, this one.
        case pinned(String)
        /// `by` needs a version in `range`.
        case constraint(by: String, range: String)
        /// Two or more folders hold this version, these.
        case claimed(folders: [String])
        /// Its dependencies cannot be met, for this reason (nil: the search gave up there).
        case dependencies(PluginResolution?)
    }
}
