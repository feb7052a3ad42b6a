public import BeaconDelivery
import BeaconEngine
import BeaconPOSIX
public import BeaconWire
import BikeListJSON
import SystemPackage

/// The embedded registry for a standalone café and the demo: the missing set from a local JSON file (the
/// same format as `GET /bikes`, re-read when its size or modification time changes) and sightings appended,
/// one JSON object per line, to a local file (fsynced, so a delivered sighting is on disk).
public final class FileRegistry: Registry {
    public let bikesPath: String
    public let sightingsPath: String
    private let maximumBytes: Int

    public init(bikes: String, sightings: String, maximumBytes: Int = 16 * 1024 * 1024) {
        bikesPath = bikes
        sightingsPath = sightings
        self.maximumBytes = maximumBytes
    }

    public var displayName: String { "file://" + bikesPath }

    /// The file is read whole each time it changes; nothing is recorded (the cache keeps the set, version 1).
    public func fetchMissing(validators: CacheValidators?, regions: [BeaconRegion], recording: ListRecording?)
        async throws(RegistryError) -> RegistryFetch
    {
        let version: String
        do {
            version = try Self.version(of: bikesPath)
        } catch {
            throw RegistryError(.file, "\(bikesPath): \(error)")
        }
        if validators?.etag == version { return .notModified }
        var reader = BikeListReader(shape: .answer)
        var builder = MissingBikeSet.Builder(regions: regions)
        do {
            guard
                try ChunkedFile.read(path: bikesPath, limit: maximumBytes, { try reader.feed($0) { builder.add($0) } })
                    != nil
            else {
                throw RegistryError(.file, "\(bikesPath): no such file or directory")
            }
            try reader.finish { builder.add($0) }
        } catch let error as BikeListError {
            throw RegistryError(.badAnswer, "\(bikesPath): \(error)")
        } catch let error as RegistryError {
            throw error
        } catch {
            throw RegistryError(.file, "\(bikesPath): \(error)")
        }
        return .list(builder.build(), validators: CacheValidators(etag: version), recorded: nil)
    }

    public var id: SinkID { .registry }

    public func deliver(_ sighting: OutgoingSighting) async -> DeliveryOutcome {
        do {
            let descriptor = try FileDescriptor.open(
                FilePath(sightingsPath), .writeOnly, options: [.append, .create, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead])
            defer { try? descriptor.close() }
            _ = try Array((sighting.json + "\n").utf8).withUnsafeBytes { try descriptor.writeAll($0) }
            try SystemCalls.sync(descriptor)
            return .delivered
        } catch {
            return .retry(after: nil, reason: "\(sightingsPath): \(error)")
        }
    }

    /// Size and modification time, as a stand-in for an ETag.
    static func version(of path: String) throws -> String {
        let descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        defer { try? descriptor.close() }
        let size = try descriptor.seek(offset: 0, from: .end)
        return "\(size)-\(try SystemCalls.modificationTime(descriptor))"
    }
}
