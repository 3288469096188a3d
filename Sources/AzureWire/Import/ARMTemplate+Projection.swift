import Formats
import UpgradeEngine

extension ARMTemplate {
    /// The parts of a scale set resource the reader uses, evaluated. A field the rollout
    /// depends on that cannot be evaluated is a problem; one it does not is left out.
    struct Projection {
        let evaluator: ARMEvaluator
        var problems: [Problem] = []
        /// Parts that could not be evaluated and that matter only if they hold the health source.
        var deferred: [Problem] = []
        /// The paths that could not be evaluated.
        var unevaluated: [String] = []

        /// `raw` evaluated (`deep`: with everything in it; otherwise only when it is itself an
        /// expression, its members as written), or nil with a problem: a deferred one when the
        /// value matters only if it holds the health source.
        mutating func evaluated(_ raw: JSON?, _ path: String, deep: Bool, deferring: Bool = false) -> JSON? {
            guard let raw else { return nil }
            let exhaustedBefore = evaluator.exhausted
            do { return deep ? try evaluator.value(raw, at: path) : try evaluator.shallow(raw, at: path) } catch {
                // Once the budget ran out, the problem is said once, not for every later field.
                if exhaustedBefore || error.reported {
                    unevaluated.append(path)
                    return nil
                }
                if deferring { deferred.append(ARMTemplate.problem(error, at: path)) } else { problems.append(ARMTemplate.problem(error, at: path)) }
                unevaluated.append(path)
                return nil
            }
        }

        mutating func needed(_ raw: JSON?, _ path: String) -> JSON? { evaluated(raw, path, deep: true) }
        mutating func container(_ raw: JSON?, _ path: String) -> JSON? { evaluated(raw, path, deep: false) }
        mutating func healthContainer(_ raw: JSON?, _ path: String) -> JSON? { evaluated(raw, path, deep: false, deferring: true) }

        /// `raw` fully evaluated, or nil when it cannot be (the rollout does not depend on it).
        func optional(_ raw: JSON?, _ path: String) -> JSON? {
            guard let raw else { return nil }
            return try? evaluator.value(raw, at: path)
        }

        /// `raw` with every expression evaluated that can be; one that cannot is kept as
        /// written (the same text in two versions compares equal), for `diff`'s comparison.
        func whole(_ raw: JSON, at path: String, depth: Int = 0) -> JSON {
            if let value = optional(raw, path) { return value }
            guard depth < DocumentLeaves.maxDepth else { return raw }
            switch raw {
            case .object, .ordered:
                var out: [String: JSON] = [:]
                for (key, member) in raw.object ?? [:] where !["condition", "copy", "dependsOn", "apiVersion"].contains(key) {
                    out[key] = whole(member, at: "\(path).\(key)", depth: depth + 1)
                }
                return .object(out)
            case .array(let items): return .array(items.enumerated().map { whole($0.element, at: "\(path)[\($0.offset)]", depth: depth + 1) })
            default: return raw
            }
        }

        mutating func resource(_ item: JSON, at path: String) -> JSON {
            var top: [String: JSON] = [:]
            top["type"] = item.member("type")
            top["name"] = optional(item.member("name"), "\(path).name")
            top["location"] = optional(item.member("location"), "\(path).location")
            top["zones"] = needed(item.member("zones"), "\(path).zones")
            if let sku = container(item.member("sku"), "\(path).sku") {
                if sku.object == nil {
                    top["sku"] = sku
                } else {
                    var out: [String: JSON] = [:]
                    // A template may pass the count as a string parameter; ARM hands "2" to the
                    // resource provider, which reads it as the number.
                    out["capacity"] = needed(sku.member("capacity"), "\(path).sku.capacity").map { value in
                        if case .string(let text) = value, let n = Int(text) { return .int(n) } else { return value }
                    }
                    out["name"] = optional(sku.member("name"), "\(path).sku.name")
                    out["tier"] = optional(sku.member("tier"), "\(path).sku.tier")
                    top["sku"] = .object(out)
                }
            }
            guard let properties = container(item.member("properties"), "\(path).properties") else { return .object(top) }
            let at = "\(path).properties"
            var inner: [String: JSON] = [:]
            for key in ["orchestrationMode", "platformFaultDomainCount", "upgradePolicy"] { inner[key] = needed(properties.member(key), "\(at).\(key)") }
            for key in ["automaticRepairsPolicy", "scaleInPolicy", "lifecycleHooksProfile"] { inner[key] = optional(properties.member(key), "\(at).\(key)") }
            if let profile = container(properties.member("virtualMachineProfile"), "\(at).virtualMachineProfile") {
                inner["virtualMachineProfile"] = self.profile(profile, at: "\(at).virtualMachineProfile")
            }
            top["properties"] = .object(inner)
            return .object(top)
        }

        mutating func profile(_ profile: JSON, at path: String) -> JSON {
            var kept: [String: JSON] = [:]
            if let storage = try? evaluator.shallow(profile.member("storageProfile") ?? .null, at: "\(path).storageProfile"),
               let image = optional(storage.member("imageReference"), "\(path).storageProfile.imageReference") {
                kept["storageProfile"] = .object(["imageReference": image])
            }
            if let network = healthContainer(profile.member("networkProfile"), "\(path).networkProfile"), let rawProbe = network.member("healthProbe") {
                // Only the probe's presence and id are read; a probe whose expression cannot be
                // evaluated is taken as present.
                switch optional(rawProbe, "\(path).networkProfile.healthProbe") {
                case .null?: break
                case let probe?: kept["networkProfile"] = .object(["healthProbe": probe])
                case nil: kept["networkProfile"] = .object(["healthProbe": .object([:])])
                }
            }
            if let extensionProfile = healthContainer(profile.member("extensionProfile"), "\(path).extensionProfile"),
               let extensions = healthContainer(extensionProfile.member("extensions"), "\(path).extensionProfile.extensions") {
                let base = "\(path).extensionProfile.extensions"
                guard case .array(let items) = extensions else {
                    kept["extensionProfile"] = .object(["extensions": extensions])
                    return .object(kept)
                }
                var out: [JSON] = []
                for (i, raw) in items.enumerated() {
                    guard let item = healthContainer(raw, "\(base)[\(i)]") else { continue }
                    var entry: [String: JSON] = [:]
                    entry["name"] = optional(item.member("name"), "\(base)[\(i)].name")
                    if let properties = container(item.member("properties"), "\(base)[\(i)].properties") {
                        let at = "\(base)[\(i)].properties"
                        let typeKey = properties.member("type") != nil ? "type" : "typePropertiesType"
                        var props: [String: JSON] = [:]
                        props[typeKey] = needed(properties.member(typeKey), "\(at).\(typeKey)")
                        if case .string(let type)? = props[typeKey], ScaleSetResource.healthExtensionTypes.contains(type) {
                            for key in ["publisher", "typeHandlerVersion", "autoUpgradeMinorVersion", "enableAutomaticUpgrade", "settings"] {
                                props[key] = needed(properties.member(key), "\(at).\(key)")
                            }
                        }
                        entry["properties"] = .object(props)
                    }
                    out.append(.object(entry))
                }
                kept["extensionProfile"] = .object(["extensions": .array(out)])
            }
            return .object(kept)
        }
    }
}
