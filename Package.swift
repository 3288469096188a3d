// swift-tools-version:6.0
import PackageDescription

/// Strictness shared by every Swift target: Swift 6 language mode comes from the tools version,
/// existential `any` is required where a protocol is used as a type, and a file sees only the
/// members of modules it imports itself (no leaking through another file's imports), and an
/// import is internal unless written `public import` (only where a public declaration or
/// inlinable code shows the module's types).
let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility"),
                              .enableUpcomingFeature("InternalImportsByDefault")]

let package = Package(
    name: "rehearse",
    products: [
        .executable(name: "rehearse", targets: ["rehearse"]),
        .executable(name: "rehearse-bench", targets: ["rehearse-bench"]),
        .library(name: "LuaHost", targets: ["LuaHost"]),
        .library(name: "UpgradeEngine", targets: ["UpgradeEngine"]),
        .library(name: "Formats", targets: ["Formats"]),
        .library(name: "AzureWire", targets: ["AzureWire"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // HTTP(S) probes: an overall deadline, a bounded body, no decompression and (as the
        // extension) no certificate verification, which URLSession cannot turn off on Linux.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
        // SHA-256 of bundle archives and files (Apple's maintained CryptoKit API on Linux).
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // The HTML rehearsal report's page template.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        // JUnit XML for `rehearse test` (CI systems read it).
        .package(url: "https://github.com/CoreOffice/XMLCoder", from: "0.18.2"),
        // The sweep's and the comparison's text tables (column widths and alignment).
        .package(url: "https://github.com/ordo-one/TextTable", from: "0.0.2"),
        // log-gamma for the risk gate's confidence sequences (RealModule: pure Swift, no Foundation).
        .package(url: "https://github.com/apple/swift-numerics", from: "1.1.1"),
        // `rehearse serve`: HTTP(S) server, the generated CA and server certificate, the fake Entra tokens.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // serve's logger, its graceful shutdown on SIGTERM/SIGINT, and the HTTP parts its parser-refusal handler reads.
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.20.0"),
    ],
    targets: [
        // Debian's liblua5.4-dev, found through pkg-config; the shim header gives Swift the macros.
        .systemLibrary(
            name: "CLua",
            pkgConfig: "lua5.4",
            providers: [.apt(["liblua5.4-dev"])]
        ),
        // The only C that may longjmp: trampolines, message handler, hooks, allocator, watchdog.
        .target(name: "CLuaSupport", dependencies: ["CLua"]),
        // The benchmark's reference hosts, written directly against the C API (the floor with our allocator, sandbox and call funnel).
        .target(name: "CLuaBench", dependencies: ["CLua", "CLuaSupport"]),
        .target(name: "LuaHost", dependencies: ["CLua", "CLuaSupport", "Formats"], swiftSettings: strict),
        // Formats that know nothing of scale sets: JSON (reading with line and column in errors,
        // writing with sorted keys), ISO 8601 durations and timestamps (`Millis`), problems.
        .target(name: "Formats", swiftSettings: strict),
        // The domain: definitions, policy, health, planning, the rolling upgrade, the simulation.
        // Memory hints Swift has no spelling for (prefetch), as static inline C the optimiser inlines.
        .target(name: "CMemoryHints"),
        .target(name: "UpgradeEngine", dependencies: ["Formats", "CMemoryHints", .product(name: "RealModule", package: "swift-numerics")],
                swiftSettings: strict),
        // What Azure writes, read into and written from engine values: the ARM field reader,
        // upgradePolicy and the health extension's settings, policy overrides by path, the
        // get-latest / REST / OS-history status shapes, the plan as JSON.
        .target(name: "AzureWire", dependencies: ["Formats", "UpgradeEngine"], swiftSettings: strict),
        // Plugin bundles: manifest, SemVer ranges, catalog and resolver, archives, repositories, the lock.
        .target(name: "Plugins", dependencies: ["Formats", .product(name: "Crypto", package: "swift-crypto")],
                swiftSettings: strict),
        // Lua/ holds the built-in Lua modules (rehearse.faults), as files the lint sees; the
        // executable carries them inside itself (.ci/embed-resources), so a copied binary works alone.
        .target(name: "Scenario", dependencies: ["Plugins", "LuaHost", "UpgradeEngine", "Formats", "AzureWire"],
                exclude: ["Lua"], swiftSettings: strict),
        // Renderings of typed runs and plans: timeline text, events as JSON lines (and the file
        // they are written to), the status and plan text.
        .target(name: "Reports", dependencies: ["UpgradeEngine", "Formats", "AzureWire", .product(name: "TextTable", package: "TextTable"),
                                               .product(name: "XMLCoder", package: "XMLCoder"),
                                               .product(name: "Mustache", package: "swift-mustache")],
                exclude: ["Templates"], // carried inside the executable (.ci/embed-resources)
                swiftSettings: strict),
        // Real probes of live endpoints (HTTP(S) through AsyncHTTPClient, TCP connects).
        // HTTP(S) GETs with bounds (plugins install) and what probes and downloads share: the
        // blocking bridge from the synchronous command line, network failures in words.
        .target(
            name: "HTTPFetch",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "HealthProbe",
            dependencies: [
                "UpgradeEngine", "HTTPFetch", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        // `rehearse serve`: a steppable run behind the Microsoft.Compute REST subset, HTTPS and a fake Entra authority.
        .target(
            name: "Serve",
            dependencies: [
                "Scenario", "UpgradeEngine", "Formats", "AzureWire",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"), .product(name: "JWTKit", package: "jwt-kit"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "rehearse",
            dependencies: [
                "Scenario", "Serve", "Plugins", "Reports", "UpgradeEngine", "Formats", "AzureWire", "HealthProbe", "HTTPFetch", "LuaHost",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "rehearse-bench",
            dependencies: [
                "LuaHost", "CLuaBench", "UpgradeEngine", "Formats", "AzureWire", "Scenario",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // Fuzz targets for value conversion and the health-body and policy parsers: libFuzzer with
        // `-sanitize=fuzzer -DFUZZING` (see the README), a corpus replayer otherwise.
        .executableTarget(name: "rehearse-fuzz", dependencies: ["LuaHost", "UpgradeEngine", "Formats", "AzureWire"], swiftSettings: strict),
        .testTarget(name: "LuaHostTests", dependencies: ["LuaHost", "CLua", "Formats"], swiftSettings: strict),
        .testTarget(name: "UpgradeEngineTests", dependencies: ["UpgradeEngine", "Formats", "AzureWire", "Reports"], swiftSettings: strict),
        .testTarget(name: "RehearseCLITests", dependencies: ["rehearse"], exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(name: "rehearseTests", dependencies: ["rehearse", "Scenario", "Reports", "UpgradeEngine", "LuaHost", "Formats", "Serve", "AzureWire",
                                                         .product(name: "ArgumentParser", package: "swift-argument-parser")],
                    swiftSettings: strict),
        .testTarget(name: "ServeTests", dependencies: ["Serve", "Scenario", "Formats", "UpgradeEngine", "Reports", "AzureWire",
                                                      .product(name: "AsyncHTTPClient", package: "async-http-client"),
                                                      .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                                                      .product(name: "HTTPTypes", package: "swift-http-types")],
                    swiftSettings: strict),
        .testTarget(
            name: "ScenarioTests",
            dependencies: ["Scenario", "Plugins", "Reports", "UpgradeEngine", "Formats", "AzureWire", "LuaHost"],
            swiftSettings: strict
        ),
    ]
)
