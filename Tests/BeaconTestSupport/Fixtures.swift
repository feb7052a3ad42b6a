import BeaconWire
public import Foundation

/// Where the test captures live: `Fixtures/` in this repository and `../shared/fixtures` beside it
/// (the real captures, which CI provides and the repository must not copy).
public enum Fixtures {
    /// The clone, as the compiler saw it; BEACOND_SOURCE_ROOT when the tests run where it is elsewhere (built for arm64
    /// in a chroot that saw it at /src, run under qemu beside it: scripts/test-arm64).
    public static let repositoryRoot: URL =
        ProcessInfo.processInfo.environment["BEACOND_SOURCE_ROOT"].map { URL(fileURLWithPath: $0) }
        ?? URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static let edgeDirectory = repositoryRoot.appendingPathComponent("Fixtures/edge")
    public static let sharedDirectory = repositoryRoot.deletingLastPathComponent().appendingPathComponent(
        "shared/fixtures")

    /// Every capture in a directory that has a `NAME.expected.jsonl` beside it.
    public static func captures(in directory: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        // Expected files, READMEs and scripts have no expected file of their own, so this filter drops them too.
        return names.sorted()
            .map { directory.appendingPathComponent($0) }
            .filter { FileManager.default.fileExists(atPath: expectedURL(for: $0).path) }
    }

    public static var sharedCaptures: [URL] { captures(in: sharedDirectory) }
    public static var edgeCaptures: [URL] { captures(in: edgeDirectory) }

    public static func expectedURL(for capture: URL) -> URL {
        capture.deletingPathExtension().appendingPathExtension("expected.jsonl")
    }

    /// The expected decode, one JSON object per line, as `[String: JSONValue]` dictionaries.
    public static func expected(for capture: URL) throws -> [[String: JSONValue]] {
        try String(contentsOf: expectedURL(for: capture), encoding: .utf8)
            .split(separator: "\n")
            .map { try JSONValue.object(from: String($0)) }
    }
}

/// A JSON scalar, comparable across independently written files (key order and spacing do not matter).
public enum JSONValue: Equatable, CustomStringConvertible {
    case string(String)
    case number(Int)
    case null

    public static func object(from line: String) throws -> [String: JSONValue] {
        let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed])
        guard let dictionary = parsed as? [String: Any] else { throw FixtureError("not a JSON object: \(line)") }
        return try dictionary.mapValues { value in
            switch value {
            case is NSNull: return .null
            case let string as String: return .string(string)
            case let number as NSNumber: return .number(number.intValue)
            default: throw FixtureError("unexpected JSON value in \(line)")
            }
        }
    }

    public var description: String {
        switch self {
        case .string(let text): "\"\(text)\""
        case .number(let value): String(value)
        case .null: "null"
        }
    }
}

public struct FixtureError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension Fixtures {
    /// The café capture from `Fixtures/cafe/generate-cafe.py`, its bike list and its ground-truth sightings.
    public static let cafeDirectory = repositoryRoot.appendingPathComponent("Fixtures/cafe")
    public static let cafeCapture = cafeDirectory.appendingPathComponent("cafe.pcap")
    public static let cafeBikes = cafeDirectory.appendingPathComponent("bikes.json")
    public static let cafeSightings = cafeDirectory.appendingPathComponent("cafe.sightings.jsonl")
    /// The café's own beacon in that capture.
    public static let cafeStationBeacon = "21EECF71-D5C7-4A00-9B90-27C94B5146EA:2:1"
}
