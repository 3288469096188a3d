import ArgumentParser
import Formats
import Foundation
import Reports
import Scenario
import UpgradeEngine

/// Every `--plugin-path` must be a folder: a path that does not exist is bad input, not an empty
/// plugin path.
func checkPluginPaths(_ paths: [String]) throws {
    for path in paths {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw InputError(option: "--plugin-path", path, problem: "no such folder", allowed: "a folder that holds plugin bundles")
        }
    }
}

/// A warning on standard error for an event that is one (a wire oddity, instances without metrics).
func warnIfWire(_ event: Event) {
    switch event.payload {
    case .wireWarning(let name, let message): warn(message, location: .document(path: nil, field: name))
    case .metricsMissing: warn(event.detail)
    default: break
    }
}
