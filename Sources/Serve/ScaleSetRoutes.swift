import AzureWire
import Formats
import Foundation
import HTTPTypes
import Scenario
import UpgradeEngine

/// What a scale set route reads: the request (its path parameters), the scale set's id as the
/// client spelled its subscription and resource group, the body.
struct ScaleSetCall: Sendable {
    let call: ServeAPI.Call
    /// `/subscriptions/{s}/resourceGroups/{g}/providers/Microsoft.Compute/virtualMachineScaleSets/{name}`.
    let id: String
    let subscription: String
    let body: JSON?

    /// The instance named by the path's `{id}` (after `virtualMachines/`).
    func instance(in shapes: ScaleSetShapes) throws(ARMError) -> InstanceView {
        let text = call.parameter("id")
        guard let n = Int(text), let vm = shapes.instances.first(where: { $0.id == n }) else {
            throw ARMError.resourceNotFound("Microsoft.Compute/virtualMachineScaleSets/virtualMachines", "\(shapes.scaleSet.name)/\(text)",
                                            group: resourceGroup)
        }
        return vm
    }

    /// The resource group as the client spelled it.
    var resourceGroup: String { call.parameter("group") }
}

/// An answer a step computes: status, JSON body (nil: empty) and headers; made a response outside the run.
struct Answer: Sendable {
    var status: HTTPResponse.Status = .ok
    var body: JSON?
    var headers: [(HTTPField.Name, String)] = []
    /// The body already written as JSON text (instead of `body`).
    var text: String?

    init(status: HTTPResponse.Status = .ok, body: JSON? = nil, headers: [(HTTPField.Name, String)] = []) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    /// 200 with a body already written as JSON text.
    init(text: String) { self.text = text }
}

/// One route below a scale set: the method, the path after the scale set's name in the
/// router's syntax (`{id}`: an instance id or an event name; case is the router's, ignored) and
/// the step it runs, on the run, as one call with nothing else in between.
struct ScaleSetRoute: Sendable {
    let method: HTTPRequest.Method
    let pattern: String
    let step: @Sendable (ScaleSetCall, isolated ServedRun) throws -> Answer

    init(_ method: HTTPRequest.Method, _ path: String, _ step: @escaping @Sendable (ScaleSetCall, isolated ServedRun) throws -> Answer) {
        self.method = method
        pattern = path
        self.step = step
    }
}

/// Every route group below a scale set; `ServeAPI` adds each to the router. Adding a group: a
/// file declaring `static let routes: [ScaleSetRoute]` in an extension of `ScaleSetRoutes`, and
/// its name in `all`.
enum ScaleSetRoutes {
    static let all: [ScaleSetRoute] = model + instances + rolling + actions + instanceActions + hooks + power
}

/// `Azure-AsyncOperation` (and `Location` for a 202) with `Retry-After: 1`: the Python SDK
/// waits 30 s when Retry-After is missing or 0.
func lroHeaders(_ c: ScaleSetCall, op: String, location: Bool) -> [(HTTPField.Name, String)] {
    let url = "\(c.call.base)/subscriptions/\(c.subscription)/providers/Microsoft.Compute/locations/eastus/operations/\(op)"
    var headers: [(HTTPField.Name, String)] = [(HTTPField.Name("Azure-AsyncOperation")!, "\(url)?p=\(op)&api-version=\(c.call.apiVersion)"),
                                               (.retryAfter, "1")]
    if location { headers.append((.location, "\(url)?p=\(op)&monitor=true&api-version=\(c.call.apiVersion)")) }
    return headers
}

/// 202 Accepted with the operation's headers and no body (Azure's answer to a POST action).
func accepted(_ c: ScaleSetCall, op: String) -> Answer {
    Answer(status: .accepted, body: nil, headers: lroHeaders(c, op: op, location: true))
}

extension ScaleSetRoutes {
    /// The scale set resource: GET, PATCH and PUT (one step: every change at one instant, or none).
    static let model: [ScaleSetRoute] = [
        ScaleSetRoute(.get, "") { c, run in Answer(body: run.shapes(id: c.id, apiVersion: c.call.apiVersion).resource) },
        ScaleSetRoute(.patch, "") { c, run in try update(c, run) },
        ScaleSetRoute(.put, "") { c, run in try update(c, run) },
        ScaleSetRoute(.get, "instanceView") { c, run in Answer(body: run.shapes(id: c.id).scaleSetInstanceView) },
    ]

    private static func update(_ c: ScaleSetCall, _ run: isolated ServedRun) throws(ARMError) -> Answer {
        guard let body = c.body else {
            throw ARMError(.badRequest, code: "InvalidRequestContent", message: "The request content is empty; expected a virtualMachineScaleSet object.")
        }
        try checkConditions(c, etag: run.etag)
        let update = try ScaleSetUpdate.read(body, scaleSet: run.scaleSet, policy: run.policy, model: run.model)
        let unapplied = UpdateFields.scaleSet.problems(body, served: run.shapes(id: c.id).resource)
        if !unapplied.isEmpty { throw ARMError.invalid(ValidationFailure(unapplied)) }
        try run.perform(try update.actions(run))
        let op = run.begin(.immediate)
        return Answer(body: run.shapes(id: c.id, apiVersion: c.call.apiVersion).resource, headers: lroHeaders(c, op: op, location: false))
    }

    /// `If-Match` and `If-None-Match` against the scale set's `etag` (SPEC §6c): `If-Match` with
    /// another value (`*` matches the scale set, which exists), and `If-None-Match: *` or naming
    /// the etag, are 412 `PreconditionFailed`, nothing changed. The text of Compute's answer to a
    /// stale If-Match ("Etag provided in if-match header …", kubernetes-sigs/cloud-provider-azure#9728).
    private static func checkConditions(_ c: ScaleSetCall, etag: String) throws(ARMError) {
        func tags(_ header: String) -> [String] { header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        if let header = c.call.ifMatch, !tags(header).contains(where: { $0 == "*" || $0 == etag }) {
            throw ARMError(.preconditionFailed, code: "PreconditionFailed",
                           message: "Etag provided in if-match header \(JSON.string(header).brief(100)) does not match etag \(etag) of resource.")
        }
        if let header = c.call.ifNoneMatch, tags(header).contains(where: { $0 == "*" || $0 == etag }) {
            throw ARMError(.preconditionFailed, code: "PreconditionFailed",
                           message: "Etag provided in if-none-match header \(JSON.string(header).brief(100)) matches etag \(etag) of the existing resource; if-none-match \"*\" allows only the creation of a new one.")
        }
    }

    /// The instances: list (with `$expand=instanceView`), one, its instance view.
    static let instances: [ScaleSetRoute] = [
        ScaleSetRoute(.get, "virtualMachines") { c, run in
            let shapes = run.shapes(id: c.id), expand = c.call.expandsInstanceView
            return Answer(body: .object(["value": .array(shapes.instances.map { shapes.vm($0, expand: expand) })]))
        },
        ScaleSetRoute(.get, "virtualMachines/{id}") { c, run in
            let shapes = run.shapes(id: c.id)
            return Answer(body: shapes.vm(try c.instance(in: shapes), expand: c.call.expandsInstanceView))
        },
        ScaleSetRoute(.get, "virtualMachines/{id}/instanceView") { c, run in
            let shapes = run.shapes(id: c.id)
            return Answer(body: shapes.instanceView(try c.instance(in: shapes)))
        },
    ]

    /// The rolling upgrade: get-latest (a poll), cancel, the OS and extension upgrades, the OS upgrade history (a poll).
    static let rolling: [ScaleSetRoute] = [
        ScaleSetRoute(.get, "rollingUpgrades/latest") { c, run in
            try run.polled()
            guard let status = run.status?.shown(toAPIVersion: c.call.apiVersion) else {
                throw ARMError(.notFound, code: "NotFound", message: "No rolling upgrade has run on the virtual machine scale set \(run.name).")
            }
            let id = "\(c.id)/rollingUpgrades/latest"
            // Polls between two events read the same status: its text is made once.
            return Answer(text: run.latestText(status, id: id) {
                guard case .object(var fields) = status.restJSON(scaleSet: run.name, epoch: run.epoch) else { return status.restJSON(scaleSet: run.name, epoch: run.epoch) }
                fields["id"] = .string(id)
                return .object(fields)
            })
        },
        ScaleSetRoute(.post, "rollingUpgrades/cancel") { c, run in
            try run.perform(.cancel)
            return accepted(c, op: run.begin(.immediate))
        },
        ScaleSetRoute(.post, "osRollingUpgrade") { c, run in
            let before = run.upgradesStarted
            try run.perform(.startOSUpgrade(image: nil))
            return accepted(c, op: run.begin(.rollingUpgrade(after: before)))
        },
        ScaleSetRoute(.post, "extensionRollingUpgrade") { c, run in
            let before = run.upgradesStarted
            try run.perform(.startExtensionUpgrade(version: nil))
            return accepted(c, op: run.begin(.rollingUpgrade(after: before)))
        },
        ScaleSetRoute(.get, "osUpgradeHistory") { c, run in
            try run.polled()
            let location = run.scaleSet.location
            return Answer(body: .object(["value": .array(run.history.map { record in
                var shown = record
                shown.code = record.code.shown(toAPIVersion: c.call.apiVersion)
                return shown.json(location: location, epoch: run.epoch)
            })]))
        },
    ]

    /// Actions on instances: manual upgrade, approvals, reimage (of the set, of listed ids, of one VM).
    static let actions: [ScaleSetRoute] = [
        // VirtualMachineScaleSets_UpdateInstances: `instanceIds` required (`["*"]`: every instance).
        ScaleSetRoute(.post, "manualUpgrade") { c, run in
            let ids = try instanceIDs(c.body, required: "upgrade")
            try run.perform(.manualUpgrade(ids: ids))
            return accepted(c, op: run.begin(.instances(ids ?? run.instances.map(\.id))))
        },
        ScaleSetRoute(.post, "approveRollingUpgrade") { c, run in
            try run.perform(.approveOSUpgrade(ids: try instanceIDs(c.body)))
            return accepted(c, op: run.begin(.immediate))
        },
        ScaleSetRoute(.post, "virtualMachines/{id}/approveRollingUpgrade") { c, run in
            let vm = try c.instance(in: run.shapes(id: c.id))
            try run.perform(.approveOSUpgrade(ids: [vm.id]))
            return accepted(c, op: run.begin(.immediate))
        },
        ScaleSetRoute(.post, "reimage") { c, run in try reimage(c, run, ids: try instanceIDs(c.body)) },
        ScaleSetRoute(.post, "reimageAll") { c, run in try reimage(c, run, ids: try instanceIDs(c.body)) },
        ScaleSetRoute(.post, "virtualMachines/{id}/reimage") { c, run in try reimageOne(c, run) },
        ScaleSetRoute(.post, "virtualMachines/{id}/reimageAll") { c, run in try reimageOne(c, run) },
    ]

    /// A reimage tracked until its instances run again.
    private static func reimage(_ c: ScaleSetCall, _ run: isolated ServedRun, ids: [Int]?) throws(ARMError) -> Answer {
        try run.perform(.reimage(ids: ids))
        return accepted(c, op: run.begin(.instances(ids ?? run.instances.map(\.id))))
    }

    /// A reimage of the VM the path names, protected from scale set actions or not (a call on
    /// the instance itself), tracked until it runs again.
    private static func reimageOne(_ c: ScaleSetCall, _ run: isolated ServedRun) throws(ARMError) -> Answer {
        let id = try c.instance(in: run.shapes(id: c.id)).id
        try run.perform(.onInstance(id: id, .reimage))
        return accepted(c, op: run.begin(.instances([id])))
    }
}
