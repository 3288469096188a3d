/// The kinds of operation the engine performs on an instance. A reimage restarts the instance
/// on the model it already runs.
public enum OperationKind: String, Sendable {
    case upgrade, create, delete, rollback, reimage
}
