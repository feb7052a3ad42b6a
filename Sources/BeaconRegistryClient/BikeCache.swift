public import BeaconEngine
import BeaconPOSIX
public import BeaconWire
import BikeListJSON
import ListChanges
import SystemPackage
import TextFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The last good missing-bike list, kept in the state directory so detection works from the first second
/// after a reboot, network or not. Written atomically (temporary file, fsync, rename, fsync of the directory):
/// a crash or power cut leaves the old cache or the new one, never half of either.
///
/// Only the missing bikes, and only the fields beacond uses, are written, so no owner data reaches the disk even
/// if the registry sent it. Written and read a piece at a time (`BikeListReader`), so the largest list costs the
/// memory of its set, not of its text: a cache that could not be loaded within the unit's memory limit would kill
/// the daemon at every start.
public struct BikeCache: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    public struct Contents: Sendable {
        public var set: MissingBikeSet
        public var validators: CacheValidators
        /// When the registry gave this list (milliseconds since the epoch).
        public var fetchedAt: Int64
        /// Where it came from, key redacted.
        public var source: String
        /// The list's checksum (`ListChecksum`) when the file holds the list whole, as the registry listed it
        /// (version 2): the list its changes can be applied to. nil for a set written from the set (version 1).
        public var checksum: String?

        public init(
            set: MissingBikeSet, validators: CacheValidators, fetchedAt: Int64, source: String, checksum: String? = nil
        ) {
            self.set = set
            self.validators = validators
            self.fetchedAt = fetchedAt
            self.source = source
            self.checksum = checksum
        }
    }

    /// The file is one JSON object:
    /// `{"version":2,"fetchedAt":…,"source":"…","validators":{…},"bikes":[{"id":…,"beaconMinor":…,"missing":true,…},…],"checksum":"…"}`.
    /// Version 2 holds the registry's list whole (`ListFile`), every bike of every region, with its checksum; version
    /// 1, as beacond wrote it before and still does for a list it did not read whole (the embedded registry's file),
    /// holds the set's bikes, and no checksum. Both load.
    static let version = 2
    static let setVersion = 1
    static let limit = 64 * 1024 * 1024

    /// nil when there is no cache yet; throws when there is one that cannot be used. `progress` is told the bytes
    /// read so far after each piece of the file.
    public func load(
        regions: [BeaconRegion], progress: (Int) -> Void = { _ in }
    ) throws(RegistryError) -> Contents? {
        var reader = BikeListReader(shape: .cache)
        var builder = MissingBikeSet.Builder(regions: regions)
        var fields: [String: [UInt8]] = [:]
        func take(_ item: BikeListReader.Item) {
            if case .field(let key, let value) = item { fields[key] = value } else { builder.add(item) }
        }
        let damaged = RegistryError(
            .damaged, "\(path): not a beacond bike cache (truncated, or not written by beacond)")
        do {
            var read = 0
            let file = try ChunkedFile.read(path: path, limit: Self.limit) { piece in
                try reader.feed(piece, take)
                read += piece.count
                progress(read)
            }
            guard file != nil else {
                return nil
            }
            try reader.finish(take)
        } catch is BikeListError {
            throw damaged
        } catch let error as ChunkedFileError {
            throw RegistryError(.damaged, "\(error)")
        } catch {
            throw RegistryError(.file, "\(path): \(error)")
        }
        let decoder = JSONDecoder()
        guard let version = fields["version"].flatMap({ try? decoder.decode(Int.self, from: Data($0)) }),
            version == Self.version || version == Self.setVersion,
            let fetchedAt = fields["fetchedAt"].flatMap({ try? decoder.decode(Int64.self, from: Data($0)) }),
            let source = fields["source"].flatMap({ try? decoder.decode(String.self, from: Data($0)) }),
            let validators = fields["validators"].flatMap({ try? decoder.decode(CacheValidators.self, from: Data($0)) })
        else { throw damaged }
        let checksum =
            version == Self.version
            ? fields["checksum"].flatMap { try? decoder.decode(String.self, from: Data($0)) } : nil
        return Contents(
            set: builder.build(), validators: validators, fetchedAt: fetchedAt, source: source, checksum: checksum)
    }

    public func store(_ contents: Contents) throws(RegistryError) {
        let header: Data
        do {
            header = try JSONEncoder().encode(contents.validators)
        } catch {
            throw RegistryError(.file, "\(path): cannot encode the cache: \(error)")
        }
        do {
            try AtomicFile.write(to: path) { write in
                var text = Array(#"{"version":\#(Self.setVersion),"fetchedAt":\#(contents.fetchedAt),"source":"#.utf8)
                JSONString.append(contents.source, to: &text)
                text += Array(#","validators":"#.utf8) + header + Array(#","bikes":["#.utf8)
                var first = true
                try contents.set.forEachBike { region, bike, identities in
                    if !first { text.append(UInt8(ascii: ",")) }
                    first = false
                    Self.append(bike, region: region, identities: identities, to: &text)
                    if text.count >= 64 * 1024 {
                        try write(text)
                        text.removeAll(keepingCapacity: true)
                    }
                }
                text += Array("]}".utf8)
                try write(text)
            }
        } catch {
            throw RegistryError(.file, "\(path): cannot write the cache: \(error)")
        }
    }

    /// One bike in the registry's own format, so the cache reads back through the same reader: a rotating beacon's
    /// with its identities, as the registry lists it.
    static func append(_ bike: BikeRecord, region: BeaconRegion, identities: [UInt32], to text: inout [UInt8]) {
        text += Array(#"{"id":"#.utf8)
        JSONString.append(bike.id, to: &text)
        if identities.isEmpty { text += Array(#","beaconMinor":\#(bike.minor)"#.utf8) }
        text += Array(#","missing":true,"beaconUUID":"\#(region.uuid)""#.utf8)
        if let major = bike.major, identities.isEmpty { text += Array(#","beaconMajor":\#(major)"#.utf8) }
        if !identities.isEmpty {
            text += Array(#","beaconIdentities":["#.utf8)
            for (position, identity) in identities.enumerated() {
                text += Array("\(position == 0 ? "" : ",")[\(identity >> 16),\(identity & 0xFFFF)]".utf8)
            }
            text.append(UInt8(ascii: "]"))
        }
        for (name, value) in [("make", bike.make), ("model", bike.model), ("colour", bike.colour)] {
            guard let value else { continue }
            text += Array(",\"\(name)\":".utf8)
            JSONString.append(value, to: &text)
        }
        text.append(UInt8(ascii: "}"))
    }
}

/// JSON string literals, written by hand for the cache's streaming writer.
enum JSONText {
    /// A bike as the registry lists it (`ListedEntry`'s JSON, docs/registry-api.yaml's Bike), the fields beacond
    /// uses and no more.
    static func append(_ entry: ListedEntry, to text: inout [UInt8]) {
        text += Array(#"{"id":"#.utf8)
        JSONString.append(entry.id, to: &text)
        if let uuid = entry.uuid {
            text += Array(#","beaconUUID":"#.utf8)
            JSONString.append(uuid, to: &text)
        }
        if entry.isRotating {
            text += Array(#","beaconIdentities":["#.utf8)
            for (position, identity) in entry.identities.enumerated() {
                text += Array("\(position == 0 ? "" : ",")[\(identity >> 16),\(identity & 0xFFFF)]".utf8)
            }
            text.append(UInt8(ascii: "]"))
        } else {
            if let major = entry.major { text += Array(#","beaconMajor":\#(major)"#.utf8) }
            text += Array(#","beaconMinor":\#(entry.minor)"#.utf8)
        }
        text += Array(#","missing":true"#.utf8)
        for (name, value) in [("make", entry.make), ("model", entry.model), ("colour", entry.colour)] {
            guard let value else { continue }
            text += Array(",\"\(name)\":".utf8)
            JSONString.append(value, to: &text)
        }
        text.append(UInt8(ascii: "}"))
    }

    /// `{"etag":…,"lastModified":…}`, each only when there is one.
    static func appendValidators(_ validators: CacheValidators, to text: inout [UInt8]) {
        text.append(UInt8(ascii: "{"))
        var first = true
        for (name, value) in [("etag", validators.etag), ("lastModified", validators.lastModified)] {
            guard let value else { continue }
            text += Array("\(first ? "" : ",")\"\(name)\":".utf8)
            JSONString.append(value, to: &text)
            first = false
        }
        text.append(UInt8(ascii: "}"))
    }
}

/// Replaces a file's contents atomically and durably.
enum AtomicFile {
    static func write(_ bytes: [UInt8], to path: String) throws {
        try write(to: path) { write in try write(bytes) }
    }

    /// The same, with the contents given a piece at a time: `body` calls its argument with each piece.
    static func write(to path: String, _ body: (_ write: ([UInt8]) throws -> Void) throws -> Void) throws {
        let target = FilePath(path)
        let temporary = FilePath(path + ".tmp")
        let descriptor = try FileDescriptor.open(
            temporary, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: [.ownerReadWrite])
        do {
            try body { bytes in _ = try bytes.withUnsafeBytes { try descriptor.writeAll($0) } }
            try SystemCalls.sync(descriptor)
            try descriptor.close()
        } catch {
            try? descriptor.close()
            throw error
        }
        try commit(temporary, to: target)
    }

    /// A written and synced file put in `target`'s place: the rename, then the directory synced, since the rename
    /// itself is durable only then.
    static func commit(_ temporary: FilePath, to target: FilePath) throws {
        try SystemCalls.rename(temporary, target)
        let directory = try FileDescriptor.open(
            target.removingLastComponent().isEmpty ? "." : target.removingLastComponent(), .readOnly)
        defer { try? directory.close() }
        try SystemCalls.sync(directory)
    }
}
