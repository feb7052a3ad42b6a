#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    }

    public init(entries: [Entry], rejected: [Rejection: Int] = [:]) {
        self.entries = entries
        self.rejected = rejected
    }

    /// Decodes `GET /bikes` JSON. Throws only when the text as a whole is not a JSON array.
    public init(json: some Collection<UInt8>) throws(BikeListError) {
        let elements: [Element]
        do {
            elements = try JSONDecoder().decode([Element].self, from: Data(json))
        } catch DecodingError.typeMismatch, DecodingError.valueNotFound {
            // Valid JSON of the wrong shape (an object, a string, null): elements never throw, so only the
            // top level can be mistyped.
            throw BikeListError(.notAnArray)
        } catch {
            throw BikeListError(.notJSON)
        }
        var entries: [Entry] = []
        entries.reserveCapacity(elements.count)
        var rejected: [Rejection: Int] = [:]
        for element in elements {
            switch element.outcome {
            case .entry(let entry): entries.append(entry)
            case .rejected(let reason): rejected[reason, default: 0] += 1
            }
        }
        self.init(entries: entries, rejected: rejected)
    }

    /// One array element. Its decoding never throws, so one bad element cannot fail the whole list.
    struct Element: Decodable {
        enum Outcome {
            case entry(Entry)
            case rejected(Rejection)
        }
        var outcome: Outcome

        // Only these keys are ever read; `deviceToken` and other owner data are not decoded at all.
        enum Key: String, CodingKey {
            case id, beaconMinor, missing, beaconUUID, beaconMajor, make, model, colour
        }

        init(from decoder: any Decoder) {
            guard let object = try? decoder.container(keyedBy: Key.self) else {
                outcome = .rejected(.notAnObject)
                return
            }
            guard let id = try? object.decode(String.self, forKey: .id), !id.isEmpty, id.utf8.count <= 256 else {
                outcome = .rejected(.badID)
                return
            }
            guard let minor = try? object.decode(UInt16.self, forKey: .beaconMinor) else {
                outcome = .rejected(.badMinor)
                return
            }
            guard let missing = try? object.decode(Bool.self, forKey: .missing) else {
                outcome = .rejected(.badMissing)
                return
            }
            let major: UInt16?
            switch Result(catching: { try object.decodeIfPresent(UInt16.self, forKey: .beaconMajor) }) {
            case .success(let value): major = value
            case .failure:
                outcome = .rejected(.badMajor)
                return
            }
            let uuid: String?
            switch Result(catching: { try object.decodeIfPresent(String.self, forKey: .beaconUUID) }) {
            case .success(let value): uuid = value
            case .failure:
                outcome = .rejected(.badUUID)
                return
            }
            // Descriptive fields are optional: a wrong type loses the field, not the bike.
            func text(_ key: Key) -> String? {
                (try? object.decodeIfPresent(String.self, forKey: key))?.map { String($0.prefix(100)) }
            }
            outcome = .entry(
                Entry(
                    id: id, minor: minor, missing: missing, uuid: uuid, major: major,
                    make: text(.make), model: text(.model), colour: text(.colour)))
        }
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
