public import BeaconEngine
import BeaconPOSIX
public import BeaconWire
import BikeListJSON
public import ListChanges
import SystemPackage

/// The cache as the registry's list whole (version 2): written as the list comes (`ListFile`), and the list after
/// its changes worked out from it, a bike at a time, checked against the registry's checksum before it replaces it.
extension BikeCache {
    /// A new version of the cache beside it, to be written as a list comes and then committed or abandoned.
    public func newList(validators: CacheValidators, fetchedAt: Int64, source: String) throws(RegistryError) -> ListFile
    {
        try ListFile(path: path + ".incoming", validators: validators, fetchedAt: fetchedAt, source: source)
    }

    /// Puts a finished list (`ListFile.finish`) in the cache's place, durably.
    public func commit(_ file: ListFile) throws(RegistryError) {
        do {
            try AtomicFile.commit(FilePath(file.path), to: FilePath(path))
        } catch {
            file.abandon()
            throw RegistryError(.file, "\(path): cannot write the bike cache: \(error)")
        }
    }

    /// The list after `changes`: the cache's bikes read twice (the rotating bikes' ids, which name the moves, then
    /// each bike through the changes), the set made of them, and the new cache written beside the old one,
    /// finished but not committed. The caller compares its checksum with the registry's before it commits it.
    public func applying(
        _ changes: ListChanges, regions: [BeaconRegion], validators: CacheValidators, fetchedAt: Int64, source: String
    ) throws(RegistryError) -> (set: MissingBikeSet, file: ListFile) {
        var rotating: [String] = []
        try forEachEntry { entry throws(RegistryError) in if entry.isRotating { rotating.append(entry.id) } }
        let applier: ListApplier
        do {
            applier = try ListApplier(changes, rotatingIDs: rotating)
        } catch {
            throw RegistryError(.badAnswer, "the changes do not fit the list held: \(error)")
        }
        let file = try newList(validators: validators, fetchedAt: fetchedAt, source: source)
        var builder = MissingBikeSet.Builder(regions: regions)
        func take(_ entry: ListedEntry) throws(RegistryError) {
            try file.add(entry)
            builder.add(BikeList.Entry(entry))
        }
        do throws(RegistryError) {
            try forEachEntry { entry throws(RegistryError) in
                let after: ListedEntry?
                do {
                    after = try applier.apply(entry)
                } catch {
                    throw RegistryError(.badAnswer, "the changes do not fit the list held: \(error)")
                }
                if let after { try take(after) }
            }
            for entry in applier.added { try take(entry) }
            _ = try file.finish()
        } catch {
            file.abandon()
            throw error
        }
        return (builder.build(), file)
    }

    /// Every bike of a version 2 cache, as the registry listed it, a piece of the file at a time.
    func forEachEntry(_ body: (ListedEntry) throws(RegistryError) -> Void) throws(RegistryError) {
        var reader = BikeListReader(shape: .cache)
        var failure: RegistryError?
        func take(_ item: BikeListReader.Item) {
            guard failure == nil, case .entry(let entry) = item else { return }
            do throws(RegistryError) { try body(ListedEntry(entry)) } catch { failure = error }
        }
        do {
            guard try ChunkedFile.read(path: path, limit: Self.limit, { try reader.feed($0, take) }) != nil else {
                throw RegistryError(.file, "\(path): no bike cache to apply changes to")
            }
            try reader.finish(take)
        } catch let error as RegistryError {
            throw error
        } catch {
            throw RegistryError(.damaged, "\(path): \(error)")
        }
        if let failure { throw failure }
    }
}

extension ListedEntry {
    /// A bike as the list's reader read it.
    init(_ entry: BikeList.Entry) {
        self.init(
            id: entry.id, uuid: entry.uuid, major: entry.major.map(Int.init), minor: Int(entry.minor),
            identities: entry.identities, make: entry.make, model: entry.model, colour: entry.colour)
    }
}

extension BikeList.Entry {
    /// A bike of the list, as the set takes it (every bike listed is missing).
    init(_ entry: ListedEntry) {
        self.init(
            id: entry.id, minor: UInt16(clamping: entry.minor), missing: true, uuid: entry.uuid,
            major: entry.major.map { UInt16(clamping: $0) }, make: entry.make, model: entry.model,
            colour: entry.colour, identities: entry.identities)
    }
}
