// swift-tools-version: 6.0
// beacond: a missing-bike detector for a Raspberry Pi (see README.md).
import PackageDescription

let package = Package(
    name: "beacond",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "beacond", targets: ["beacond"]),
        // For the nested Benchmarks package, which measures these modules directly.
        .library(name: "BeaconWire", targets: ["BeaconWire"]),
        .library(name: "BeaconCapture", targets: ["BeaconCapture"]),
        .library(name: "BeaconEngine", targets: ["BeaconEngine"]),
    ],
    dependencies: [
        // The command line: subcommands, --help, validation errors.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Typed file descriptors and errno values for the file and socket edges (no raw Glibc calls).
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        // libbluetooth (apt: libbluetooth-dev). Only BeaconCapture imports it.
        .systemLibrary(
            name: "CBlueZ",
            pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]
        ),
        // Pure bytes -> values: capture containers, HCI events, AD structures, iBeacon frames.
        // No I/O, no clock, no Foundation.
        .target(name: "BeaconWire"),
        // Pure logic: the capture-to-engine ring, regions, the missing-bike set, ranging and the sighting
        // policy, all on injected time. No I/O.
        .target(name: "BeaconEngine", dependencies: ["BeaconWire"]),
        // The edge that touches files (and, later, the radio): streams captures through BeaconWire.
        .target(
            name: "BeaconCapture",
            dependencies: ["BeaconWire", "CBlueZ", .product(name: "SystemPackage", package: "swift-system")]
        ),
        // Command-line front ends and their text output, kept out of main.swift so tests can drive them.
        .target(
            name: "BeaconCLI",
            dependencies: [
                "BeaconWire", "BeaconCapture", "BeaconEngine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(
            name: "beacond",
            dependencies: ["BeaconCLI", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),

        .testTarget(name: "BeaconWireTests", dependencies: ["BeaconWire", "BeaconTestSupport"]),
        .testTarget(name: "BeaconEngineTests", dependencies: ["BeaconEngine", "BeaconWire", "BeaconTestSupport"]),
        .testTarget(name: "BeaconCaptureTests", dependencies: ["BeaconCapture", "BeaconWire", "BeaconTestSupport", "CBlueZ"]),
        .testTarget(name: "BeaconCLITests", dependencies: ["BeaconCLI", "BeaconWire", "BeaconTestSupport"]),
        // Fixture paths and the expected-decode loader shared by the test targets.
        .target(name: "BeaconTestSupport", dependencies: ["BeaconWire", "BeaconCapture", "BeaconEngine", "BeaconCLI"], path: "Tests/BeaconTestSupport"),
    ]
)

// Stricter language features for every target, as swift-log does.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ]
}
