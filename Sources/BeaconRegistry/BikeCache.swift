public import BeaconEngine
import BeaconCapture
import SystemPackage
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The last good missing-bike list, kept in the state directory so detection works from the first second
/// after a reboot, network or not. Written atomically (temporary file, fsync, rename, fsync of the directory):
/// a crash or power cut leaves the old cache or the new one, never half of either.
///
/// Only the fields beacond uses are written, so no owner data reaches the disk even if the registry sent it.
public struct BikeCache: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    public struct Contents: Sendable {
        public var list: BikeList
        public var validators: CacheValidators
        /// When the registry gave this list (milliseconds since the epoch).
        public var fetchedAt: Int64
        /// Where it came from, key redacted.
        public var source: String
    }

    struct File: Codable {
        var version = 1
        var fetchedAt: Int64
        var source: String
        var validators: CacheValidators
        var bikes: [Bike]

        struct Bike: Codable {
            var id: String
            var beaconMinor: UInt16
            var missing: Bool
            var beaconUUID: String?
            var beaconMajor: UInt16?
            var make: String?
            var model: String?
            var colour: String?
        }
    }

    /// nil when there is no cache yet; throws when there is one that cannot be used.
    public func load() throws(RegistryError) -> Contents? {
        let bytes: [UInt8]
        do {
            bytes = try WholeFile.read(path: path, limit: 64 * 1024 * 1024)
        } catch {
            if error.reason == "no such file or directory" { return nil }
            throw RegistryError(.file, "\(error)")
        }
        guard let file = try? JSONDecoder().decode(File.self, from: Data(bytes)), file.version == 1 else {
            throw RegistryError(.damaged, "\(path): not a beacond bike cache (truncated, or not written by beacond)")
        }
        let entries = file.bikes.map {
            BikeList.Entry(
                id: $0.id, minor: $0.beaconMinor, missing: $0.missing, uuid: $0.beaconUUID, major: $0.beaconMajor,
                make: $0.make, model: $0.model, colour: $0.colour)
        }
        return Contents(list: BikeList(entries: entries), validators: file.validators, fetchedAt: file.fetchedAt, source: file.source)
    }

    public func store(_ contents: Contents) throws(RegistryError) {
        let file = File(
            fetchedAt: contents.fetchedAt, source: contents.source, validators: contents.validators,
            bikes: contents.list.entries.map {
                File.Bike(
                    id: $0.id, beaconMinor: $0.minor, missing: $0.missing, beaconUUID: $0.uuid, beaconMajor: $0.major,
                    make: $0.make, model: $0.model, colour: $0.colour)
            })
        let data: Data
        do {
            data = try JSONEncoder().encode(file)
        } catch {
            throw RegistryError(.file, "\(path): cannot encode the cache: \(error)")
        }
        do {
            try AtomicFile.write(Array(data), to: path)
        } catch {
            throw RegistryError(.file, "\(path): cannot write the cache: \(error)")
        }
    }
}

/// Replaces a file's contents atomically and durably.
enum AtomicFile {
    static func write(_ bytes: [UInt8], to path: String) throws {
        let target = FilePath(path)
        let temporary = FilePath(path + ".tmp")
        let descriptor = try FileDescriptor.open(
            temporary, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: [.ownerReadWrite])
        do {
            _ = try bytes.withUnsafeBytes { try descriptor.writeAll($0) }
            try SystemCalls.sync(descriptor)
            try descriptor.close()
        } catch {
            try? descriptor.close()
            throw error
        }
        try SystemCalls.rename(temporary, target)
        // The rename itself is durable only once the directory is synced.
        let directory = try FileDescriptor.open(target.removingLastComponent().isEmpty ? "." : target.removingLastComponent(), .readOnly)
        defer { try? directory.close() }
        try SystemCalls.sync(directory)
    }
}
