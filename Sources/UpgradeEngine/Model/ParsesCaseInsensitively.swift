/// An enum of Azure's names (`Uniform`, `Approve`, `Replace`) read whatever their case.
public protocol ParsesCaseInsensitively: CaseIterable, RawRepresentable where RawValue == String {}

extension ParsesCaseInsensitively {
    /// The case whose name is `text`, compared case-insensitively; nil when none is.
    public init?(parsing text: String) {
        let lowered = text.lowercased()
        guard let found = Self.allCases.first(where: { $0.rawValue.lowercased() == lowered }) else { return nil }
        self = found
    }
}
