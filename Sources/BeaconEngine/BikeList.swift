/// The registry's answer to `GET /bikes`, decoded: a JSON array of bike objects.
///
/// Decoding is lenient per element and strict about the whole: one bad element is skipped and counted, but an
/// answer that is not a JSON array at all is an error, so the caller keeps the set it had.
public struct BikeList: Sendable {
    public var entries: [Entry]
    /// Elements skipped because a required field was absent or wrong, by reason.
    public var rejected: [Rejection: Int]

    public struct Entry: Hashable, Sendable {
        public var id: String
        public var minor: UInt16
        public var missing: Bool
        public var uuid: BeaconUUIDText?
        public var major: UInt16?
        public var make: String?
        public var model: String?
        public var colour: String?

        public init(
            id: String, minor: UInt16, missing: Bool, uuid: BeaconUUIDText? = nil, major: UInt16? = nil,
            make: String? = nil, model: String? = nil, colour: String? = nil
        ) {
            self.id = id
            self.minor = minor
            self.missing = missing
            self.uuid = uuid
            self.major = major
            self.make = make
            self.model = model
            self.colour = colour
        }
    }

    /// The beacon UUID as the registry wrote it; parsed when the entry is placed in a region.
    public typealias BeaconUUIDText = String

    public enum Rejection: String, Hashable, Sendable, CaseIterable {
        case notAnObject = "not an object"
        case badID = "id missing or not a non-empty string"
        case badMinor = "beaconMinor missing or not an integer 0-65535"
        case badMissing = "missing absent or not a boolean"
        case badMajor = "beaconMajor not an integer 0-65535"
        case badUUID = "beaconUUID not a UUID"
        case tooLarge = "entry larger than 64 KiB"
    }

    public init(entries: [Entry], rejected: [Rejection: Int] = [:]) {
        self.entries = entries
        self.rejected = rejected
    }

    /// Decodes `GET /bikes` JSON held whole (a small list: `replay --missing`, tests). Throws only when the text as a
    /// whole is not a JSON array. The daemon reads large lists with `BikeListReader` instead, entry by entry.
    public init(json: some Collection<UInt8>) throws(BikeListError) {
        var entries: [Entry] = []
        var rejected: [Rejection: Int] = [:]
        func collect(_ item: BikeListReader.Item) {
            switch item {
            case .entry(let entry): entries.append(entry)
            case .rejected(let reason): rejected[reason, default: 0] += 1
            case .field: break
            }
        }
        var reader = BikeListReader(shape: .answer)
        try reader.feed(json, collect)
        try reader.finish(collect)
        self.init(entries: entries, rejected: rejected)
    }
}

/// Why a registry answer could not be used at all.
public struct BikeListError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: Hashable, Sendable {
        case notJSON, notAnArray
    }
    public var code: Code

    public init(_ code: Code) { self.code = code }

    public var description: String {
        switch code {
        case .notJSON: "the bike list is not valid JSON"
        case .notAnArray: "the bike list is not a JSON array"
        }
    }
}
