public import Formats
import Foundation
public import HTTPTypes
public import Hummingbird
import NIOCore
import UpgradeEngine

/// An error as Azure Resource Manager answers it: the HTTP status and
/// `{"error": {"code", "message", "target", "details"}}`.
public struct ARMError: Error, Equatable, Sendable, UserFacingError {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// Azure's code (`InvalidParameter`, `OperationNotAllowed`, `NotFound`, …).
    public var code: String
    /// Azure's message, or rehearse's where Azure's is not known.
    public var message: String
    /// The field or resource concerned, when there is one.
    public var target: String?
    /// One entry per further problem, each `{code, target, message}`.
    public var details: [ARMError]

    /// An error answered with `status`.
    public init(_ status: HTTPResponse.Status, code: String, message: String, target: String? = nil, details: [ARMError] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.target = target
        self.details = details
    }

    /// The field or resource concerned, as a place in the request body.
    public var place: Location? { target.map { .document(path: nil, field: $0) } }
    /// An ARM error is an answer to a client, not the end of a command; were one to end it,
    /// it is bad input: 2.
    public var exitCode: Int32 { 2 }

    /// The `error` object.
    public var json: JSON {
        var fields: [String: JSON] = ["code": .string(code), "message": .string(message)]
        if let target { fields["target"] = .string(target) }
        if !details.isEmpty { fields["details"] = .array(details.map(\.json)) }
        return .object(fields)
    }

    /// 400 for a bad request body or parameter: every problem in `details`, the message as `rehearse validate` prints it.
    static func invalid(_ failure: ValidationFailure) -> ARMError {
        let details = failure.problems.map { ARMError(.badRequest, code: "InvalidParameter", message: $0.message, target: $0.field) }
        return ARMError(.badRequest, code: "InvalidParameter", message: failure.description,
                        target: failure.problems.count == 1 ? failure.problems[0].field : nil, details: failure.problems.count > 1 ? details : [])
    }

    /// 404 for a path that names nothing served.
    static func notFound(_ method: HTTPRequest.Method, _ path: String) -> ARMError {
        ARMError(.notFound, code: "NotFound",
                 message: "No route for \(method.rawValue) \(path): rehearse serve answers the Microsoft.Compute virtualMachineScaleSets subset, /subscriptions, /metadata/endpoints, the fake Entra authority and /rehearse/clock")
    }

    /// 404 for a resource that does not exist (another scale set, an instance id not in the set).
    static func resourceNotFound(_ type: String, _ name: String, group: String) -> ARMError {
        ARMError(.notFound, code: "ResourceNotFound",
                 message: "The Resource '\(type)/\(name)' under resource group '\(group)' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix")
    }

    /// 409 for an action the scale set refuses in its present state.
    static func notAllowed(_ message: String) -> ARMError { ARMError(.conflict, code: "OperationNotAllowed", message: message) }

    /// The answer to an action the engine refused, by what refused it: a request whose values are
    /// wrong whatever the state (a model or policy with problems, a capacity out of range, a
    /// `waitUntil` outside the event's window, an instance the event does not target) is 400
    /// `InvalidParameter`; instances that do not exist (deleted ones included) are 404
    /// `ResourceNotFound`; one the scale set refuses as it stands now is 409.
    static func refused(_ error: EngineError) -> ARMError {
        switch error.refusal {
        case .invalid(let problems)?: return invalid(ValidationFailure(problems))
        case .capacity?: return ARMError(.badRequest, code: "InvalidParameter", message: error.message, target: "sku.capacity")
        case .waitOutside?: return ARMError(.badRequest, code: "InvalidParameter", message: error.message, target: "waitUntil")
        case .notAHookTarget?: return ARMError(.badRequest, code: "InvalidParameter", message: error.message, target: "targetResources")
        case .noSuchInstances?: return ARMError(.notFound, code: "ResourceNotFound", message: error.message, target: "instanceIds")
        default: return notAllowed(error.message)
        }
    }
}

/// Responses with JSON bodies and the headers Azure sends with them.
enum Reply {
    /// The fields of every JSON response (made once: each field is checked as it is set).
    private static let jsonFields: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-cache"]

    /// A JSON response with `status` and extra `headers`.
    static func json(_ value: JSON, status: HTTPResponse.Status = .ok, headers: [(HTTPField.Name, String)] = []) -> Response {
        text(value.serialized(pretty: false), status: status, headers: headers)
    }

    /// A response whose body is JSON already written as text.
    static func text(_ text: String, status: HTTPResponse.Status = .ok, headers: [(HTTPField.Name, String)] = []) -> Response {
        var fields = jsonFields
        for (name, value) in headers { fields[name] = value }
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// An empty response (202 of an action with its LRO headers, 200 of a finished monitor).
    static func empty(_ status: HTTPResponse.Status, headers: [(HTTPField.Name, String)] = []) -> Response {
        var fields = HTTPFields()
        for (name, value) in headers { fields[name] = value }
        fields[.contentLength] = "0"
        return Response(status: status, headers: fields)
    }

    /// A step's answer.
    static func answer(_ answer: Answer) -> Response {
        if let text = answer.text { return Reply.text(text, status: answer.status, headers: answer.headers) }
        guard let body = answer.body else { return empty(answer.status, headers: answer.headers) }
        return json(body, status: answer.status, headers: answer.headers)
    }

    /// ARM's error body.
    static func error(_ error: ARMError) -> Response {
        json(.object(["error": error.json]), status: error.status)
    }
}

/// Hummingbird answers a thrown `ARMError` with ARM's error body and its status.
extension ARMError: HTTPResponseError {
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Reply.error(self)
    }
}
