// swift-tools-version: 6.0
// libFuzzer targets for every parser beacond has, as a nested package so the main build
// and its tests never compile them. Build and run with Fuzz/run, which adds -sanitize=fuzzer,address.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its directory, which is wherever the repository was cloned.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "beacond-fuzz",
    dependencies: [.package(path: "..")],
    targets: [
        // libFuzzer's driver, shared by every target.
        .target(name: "FuzzDriver"),
        .executableTarget(
            name: "FuzzCapture", dependencies: ["FuzzDriver", .product(name: "BeaconWire", package: root)]),
        .executableTarget(
            name: "FuzzHCIEvent", dependencies: ["FuzzDriver", .product(name: "BeaconWire", package: root)]),
        .executableTarget(
            name: "FuzzAdvertisingData", dependencies: ["FuzzDriver", .product(name: "BeaconWire", package: root)]),
        .executableTarget(
            name: "FuzzBikeList",
            dependencies: [
                "FuzzDriver", .product(name: "BeaconEngine", package: root),
                .product(name: "BikeListJSON", package: root), .product(name: "BeaconWire", package: root),
            ]),
        .executableTarget(
            name: "FuzzConfig", dependencies: [
                "FuzzDriver", .product(name: "StationSettings", package: root),
                .product(name: "TextFormats", package: root),
            ]),
        .executableTarget(
            name: "FuzzControlRequest", dependencies: ["FuzzDriver", .product(name: "BeaconControl", package: root)]),
    ]
)
