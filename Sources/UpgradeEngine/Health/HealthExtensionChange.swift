/// What a model update does to the Application Health extension of the new model.
public enum HealthExtensionChange: Equatable, Sendable {
    /// The new model has the extension with these settings (added, or changed in place).
    case set(HealthExtensionSettings)
    /// The new model has no extension.
    case remove
}
