public import Formats

/// What a template's deployment functions answer (`resourceGroup()`, `subscription()`,
/// `deployment()`, `tenant()`, `environment()`): documented defaults, each of which an option
/// (`--context NAME=VALUE`) can change. None of them changes a rollout; they let names and
/// locations built from them evaluate.
public struct ARMDeploymentContext: Equatable, Sendable {
    /// `subscription().subscriptionId`.
    public var subscriptionId = "00000000-0000-0000-0000-000000000000"
    /// `subscription().tenantId` and `tenant().tenantId`.
    public var tenantId = "00000000-0000-0000-0000-000000000000"
    /// `resourceGroup().name`.
    public var resourceGroup = "rehearse-rg"
    /// `resourceGroup().location` (and `deployment().location`).
    public var location = "eastus"
    /// `deployment().name`.
    public var deploymentName = "rehearse"

    /// The defaults above.
    public init() {}

    /// The names `set` accepts, in the order the help lists them.
    public static let names = ["subscriptionId", "tenantId", "resourceGroup", "location", "deploymentName"]

    /// Sets the value called `name` (one of `names`, any case); false when there is no such name.
    public mutating func set(_ name: String, _ value: String) -> Bool {
        switch name.lowercased() {
        case "subscriptionid": subscriptionId = value
        case "tenantid": tenantId = value
        case "resourcegroup": resourceGroup = value
        case "location": location = value
        case "deploymentname": deploymentName = value
        default: return false
        }
        return true
    }

    /// Reads `NAME=VALUE` settings (an option's values, a scenario's `context` table) into the
    /// defaults; a problem naming each one that is not `NAME=VALUE` with a known name, and each
    /// name given twice: names compare ignoring case, as ARM's do, so `location=eastus` and
    /// `Location=westeurope` are the same name with two values, and neither wins silently (a
    /// scenario's table has no order to pick one by).
    /// `option`: the command line's setting they came from (its problems are placed there, with the value).
    public static func parse(_ settings: [String], field: String, option: Setting? = nil) throws(ValidationFailure) -> ARMDeploymentContext {
        var context = ARMDeploymentContext()
        var problems: [Problem] = []
        var given: [String: String] = [:]
        func place(_ setting: String) -> Location { option.map { .setting($0, value: setting) } ?? .document(path: nil, field: "\(field) \(setting)") }
        for setting in settings {
            guard let equals = setting.firstIndex(of: "="),
                  context.set(String(setting[..<equals]), String(setting[setting.index(after: equals)...])) else {
                problems.append(Problem(at: place(setting), "is not NAME=VALUE with a known name; allowed \(names.joined(separator: ", "))"))
                continue
            }
            let name = setting[..<equals].lowercased()
            if let earlier = given[name] {
                problems.append(Problem(at: place(setting), "gives \(names.first { $0.lowercased() == name } ?? name) a second time (after \(earlier)); names compare ignoring case, as ARM's do; allowed each name once"))
            }
            given[name] = given[name] ?? setting
        }
        guard problems.isEmpty else { throw ValidationFailure(problems) }
        return context
    }

    var resourceGroupID: String { "/subscriptions/\(subscriptionId)/resourceGroups/\(resourceGroup)" }

    var resourceGroupObject: JSON {
        .object(["id": .string(resourceGroupID), "name": .string(resourceGroup), "type": .string("Microsoft.Resources/resourceGroups"),
                 "location": .string(location), "tags": .object([:]), "properties": .object(["provisioningState": .string("Succeeded")])])
    }

    var subscriptionObject: JSON {
        .object(["id": .string("/subscriptions/\(subscriptionId)"), "subscriptionId": .string(subscriptionId), "tenantId": .string(tenantId),
                 "displayName": .string("rehearse")])
    }

    var tenantObject: JSON { .object(["id": .string("/tenants/\(tenantId)"), "tenantId": .string(tenantId)]) }

    func deploymentObject(template: JSON) -> JSON {
        var properties: [String: JSON] = ["mode": .string("Incremental"), "provisioningState": .string("Accepted")]
        properties["template"] = .object(["contentVersion": template.member("contentVersion") ?? .string("1.0.0.0")])
        return .object(["name": .string(deploymentName), "location": .string(location), "properties": .object(properties)])
    }

    /// `environment()` of the public cloud.
    var environmentObject: JSON {
        .object(["name": .string("AzureCloud"), "gallery": .string("https://gallery.azure.com/"),
                 "graph": .string("https://graph.windows.net/"), "portal": .string("https://portal.azure.com"),
                 "resourceManager": .string("https://management.azure.com/"),
                 "authentication": .object(["loginEndpoint": .string("https://login.microsoftonline.com/"),
                                            "audiences": .array([.string("https://management.core.windows.net/"), .string("https://management.azure.com/")])]),
                 "suffixes": .object(["storage": .string("core.windows.net"), "sqlServerHostname": .string(".database.windows.net"),
                                      "keyvaultDns": .string(".vault.azure.net"), "acrLoginServer": .string(".azurecr.io")])])
    }
}
