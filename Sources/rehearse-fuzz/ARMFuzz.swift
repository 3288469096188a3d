import AzureWire
import Formats

/// Fuzz target 3: ARM templates made from bytes. Three bytes make one parameter or variable
/// whose value refers to others (chains, self-references, cycles, doubling, nested calls, copy
/// loops, lambdas, searches over generated text, resource ids with empty segments); the first
/// byte's top two bits nest the scale set in copied inline deployments; the bytes after a 0xFF
/// are an expression of their own. The scale set reads
/// them through every field the importer evaluates. Any outcome but a crash, a hang or runaway
/// memory is fine: the evaluator's bounds must hold.
enum ARMFuzz {
    static func run(_ bytes: [UInt8]) {
        let split = bytes.firstIndex(of: 0xFF) ?? bytes.count
        let program = Array(bytes[..<split])
        let raw = split < bytes.count ? String(decoding: bytes[(split + 1)...], as: UTF8.self) : "variables('v0')"
        _ = try? ScaleSetImport.read(template(program, raw: raw))
    }

    static func template(_ program: [UInt8], raw: String) -> JSON {
        let count = max(1, program.count / 3)
        var variables: [String: JSON] = [:]
        var parameters: [String: JSON] = [:]
        var i = 0
        for n in 0..<count {
            let op = i < program.count ? program[i] : 0
            let a = Int(i + 1 < program.count ? program[i + 1] : 0) % count
            let b = Int(i + 2 < program.count ? program[i + 2] : 0) % count
            i += 3
            let v = "variables('v\(a)')", w = "variables('v\(b)')", p = "parameters('p\(a)')"
            let expression: String
            // Bit 0x20 picks the text and resource-id functions (searches over generated text,
            // resource ids with empty or missing segments) instead of the first sixteen.
            switch op & 0x20 != 0 ? 16 + Int(op % 8) : Int(op % 16) {
            case 0: expression = v
            case 1: expression = p
            case 2: expression = "concat(\(v), \(w))"
            case 3: expression = "createArray(\(v), \(w), \(v))"
            case 4: expression = "if(equals(\(v), \(w)), \(v), \(p))"
            case 5: expression = "length(\(v))"
            case 6: expression = "map(range(0, \(a + 1)), lambda('x', \(w)))"
            case 7: expression = "union(\(v), \(w))"
            case 8: expression = "string(\(v))"
            case 9: expression = "format('{0}{1}', \(v), \(w))"
            case 10: expression = "replace(string(\(v)), 'a', string(\(w)))"
            case 11: expression = "reduce(createArray(\(v), \(w)), '', lambda('c', 'n', concat(string(lambdaVariables('c')), string(lambdaVariables('n')))))"
            case 12: expression = "\(v)[\(b)]"
            case 13: expression = "\(v).name"
            case 14: expression = String(repeating: "createArray(", count: a) + v + String(repeating: ")", count: a)
            case 16: expression = "indexOf(string(\(v)), string(\(w)))"
            case 17: expression = "lastIndexOf(string(\(v)), string(\(w)))"
            case 18: expression = "split(string(\(v)), createArray(string(\(w)), 'a', ''))"
            case 19: expression = "contains(string(\(v)), string(\(w)))"
            case 20: expression = "extensionResourceId(string(\(v)), \(["''", "'a'", "'a/'", "'/b'", "'a/b'", "'a/b/c'"][a % 6]), string(\(w)))"
            case 21: expression = "resourceId(\(["''", "'a'", "'a/b'", "'a/b/c'"][a % 4]), string(\(v)), string(\(w)))"
            case 22: expression = "replace(concat(string(\(v)), string(\(v))), string(\(w)), concat(string(\(w)), string(\(w))))"
            default: expression = raw
            }
            if op & 0x10 == 0 {
                variables["v\(n)"] = .string("[\(expression)]")
            } else {
                parameters["p\(n)"] = .object(["type": .string("object"), "defaultValue": .string("[\(expression)]")])
                variables["v\(n)"] = .string("[parameters('p\(n)')]")
            }
        }
        let scaleSet: JSON = .object([
            "type": .string("Microsoft.Compute/virtualMachineScaleSets"),
            "name": .string("[string(variables('v0'))]"),
            "copy": .object(["name": .string("loop"), "count": .string("[length(string(variables('v\(count - 1)')))]")]),
            "sku": .object(["capacity": .string("[length(string(variables('v0')))]")]),
            "zones": .string("[variables('v\(min(1, count - 1))')]"),
            "properties": .object(["upgradePolicy": .object(["mode": .string("[string(variables('v0'))]")])]),
        ])
        // The first byte's top bits nest the scale set in up to three inline deployments, each
        // copied as many times as its length says (copies of copies must stay bounded).
        let depth = Int((program.first ?? 0) >> 6)
        var resource = scaleSet
        for level in 0..<depth {
            resource = .object([
                "type": .string("Microsoft.Resources/deployments"), "name": .string("[concat('d\(level)-', copyIndex())]"),
                "copy": .object(["name": .string("d\(level)"), "count": .string("[min(800, add(1, length(string(variables('v0')))))]")]),
                "properties": .object(["mode": .string("Incremental"), "template": .object(["resources": .array([resource])])]),
            ])
        }
        return .object(["$schema": .string("https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"),
                        "contentVersion": .string("1.0.0.0"), "parameters": .object(parameters), "variables": .object(variables),
                        "resources": .array([resource])])
    }
}
