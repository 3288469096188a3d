import Formats

extension Diagnostic {
    /// The diagnostic as data, for `--output json`: severity, message, exit status and, where it
    /// has one, its place both as the text a person reads (`where`) and as typed fields (a
    /// script's `file` and `line`, a document's `file` and `field`, a script's `scaleset` field as
    /// `field` with the call's `file` and `line`, an `option` and its `value`),
    /// so a program never parses the place out of the message.
    var json: JSON {
        var fields = [JSONField("severity", .string(severity.rawValue)), JSONField("message", .string(message)),
                      JSONField("exitCode", .int(Int(exitCode)))]
        if let location {
            fields.append(JSONField("where", .string(Diagnostics.text(of: location, expectation: isExpectation))))
            fields += Self.fields(of: location)
        }
        // A field of a script's call has the call's file and line, where the location has no file.
        if let definedAt, !fields.contains(where: { $0.key == "file" }) {
            fields += [JSONField("file", .string(definedAt.file)), JSONField("line", .int(definedAt.line))]
        }
        if let context { fields.append(JSONField("context", .string(context))) }
        return JSON.ordered(fields)
    }

    /// A location's typed parts.
    static func fields(of location: Location) -> [JSONField] {
        switch location {
        case .script(let line):
            return [JSONField("file", .string(line.file)), JSONField("line", .int(line.line))]
        case .call(let name, let line):
            return [JSONField("call", .string(name)), JSONField("file", .string(line.file)), JSONField("line", .int(line.line))]
        case .document(let path, let field):
            return (path.map { [JSONField("file", .string($0))] } ?? []) + [JSONField("field", .string(field))]
        case .option(let option):
            return [JSONField("option", .string(option))]
        case .setting(let setting, let value):
            return [JSONField("option", .string(Diagnostics.option(for: setting)))] + (value.map { [JSONField("value", .string($0))] } ?? [])
        case .file(let path):
            return [JSONField("file", .string(path))]
        case .command(let command):
            return [JSONField("command", .string(command))]
        }
    }
}
