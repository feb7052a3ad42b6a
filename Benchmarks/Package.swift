// swift-tools-version: 6.0
// Benchmarks for beacond's hot paths, as a nested package (like swift-nio's) so that the main build and
// its tests never compile them. Run from the repository root: see BENCHMARKS.md.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its directory, which is wherever the repository was cloned.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "beacond-benchmarks",
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        // The plain C loop beacond's decoder is compared with, in the same process and run.
        .target(name: "CDecodeLoop", cSettings: [.unsafeFlags(["-O2"])]),
        // Counts heap allocations so "zero allocations per report" is measured, not assumed.
        .target(name: "CMallocCounter"),
        .executableTarget(
            name: "DecodeBenchmark",
            dependencies: [
                "CDecodeLoop", "CMallocCounter",
                .product(name: "BeaconWire", package: root),
                .product(name: "BeaconCapture", package: root),
            ]
        ),
    ]
)
