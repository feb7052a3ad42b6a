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
        // Deque, for the mutex-guarded queue the advert ring is compared with.
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        // The engine service's logger, in LiveBenchmark's advert-to-commit part.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // The plain C loop beacond's decoder is compared with, in the same process and run. Both it and the
        // decode benchmark (where beacond's inlinable record loop is compiled) place every function on a 64-byte
        // line and every loop on a 32-byte boundary: left to the linker, a change anywhere in the binary moved the
        // two hot loops across cache lines and the same code measured anywhere from 1.20x to 1.42x.
        .target(name: "CDecodeLoop", cSettings: [.unsafeFlags(["-O2", "-falign-functions=64", "-falign-loops=32"])]),
        // Counts heap allocations so "zero allocations per report" is measured, not assumed.
        .target(name: "CMallocCounter"),
        .executableTarget(
            name: "DecodeBenchmark",
            dependencies: [
                "CDecodeLoop", "CMallocCounter",
                .product(name: "BeaconWire", package: root),
                .product(name: "BeaconCapture", package: root),
            ],
            swiftSettings: [.unsafeFlags(["-Xllvm", "-align-all-functions=6", "-Xllvm", "-align-loops=32"])]
        ),
        // Ring and engine: the advert ring against a mutex-guarded Deque, and adverts through ring + engine
        // with every minor missing, against the decoder's own cost measured in the same run.
        .executableTarget(
            name: "EngineBenchmark",
            dependencies: [
                "CMallocCounter",
                .product(name: "BeaconWire", package: root),
                .product(name: "BeaconCapture", package: root),
                .product(name: "BeaconEngine", package: root),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // The live capture path (socketpair → HCICapture → decoder → ring) against bare reads, and the stall
        // watchdog's reaction time.
        .executableTarget(
            name: "LiveBenchmark",
            dependencies: [
                .product(name: "BeaconWire", package: root),
                .product(name: "BeaconCapture", package: root),
                .product(name: "BeaconEngine", package: root),
                .product(name: "BeaconDaemon", package: root),
                .product(name: "BeaconOutbox", package: root),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The registry's bike list into the set matching needs, read as it arrives, against decoding it whole.
        .executableTarget(
            name: "BikeListBenchmark",
            dependencies: [
                .product(name: "BeaconWire", package: root),
                .product(name: "BeaconEngine", package: root),
                .product(name: "BikeListJSON", package: root),
            ]
        ),
        // Committing sightings to the SQLite outbox against write(2) + fsync(2) of the same bytes.
        .executableTarget(
            name: "OutboxBenchmark",
            dependencies: [
                .product(name: "BeaconEngine", package: root),
                .product(name: "BeaconOutbox", package: root),
            ]
        ),
    ]
)
