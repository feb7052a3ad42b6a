public import BeaconEngine

extension BikeList {
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
