import BeaconPOSIX
public import ListChanges
import SystemPackage
import TextFormats

/// The bike cache's next version, written a bike at a time as the list comes (or as changes are applied to the one
/// held), to a file of its own beside the cache: the list whole, as the registry listed it (`ListedEntry`), every
/// bike of every region, so that its changes can be applied to it and its checksum checked. Nothing is held whole.
/// `finish` makes it durable; `BikeCache.commit` then puts it in the cache's place. Used by one task at a time.
public final class ListFile: @unchecked Sendable {
    let path: String
    private var descriptor: FileDescriptor?
    private var text: [UInt8] = []
    private var first = true
    public private(set) var checksum = ListChecksum()

    /// Starts the file at `path` (replacing any left by an earlier attempt) with the cache's header.
    init(path: String, validators: CacheValidators, fetchedAt: Int64, source: String) throws(RegistryError) {
        self.path = path
        do {
            descriptor = try FileDescriptor.open(
                FilePath(path), .writeOnly, options: [.create, .truncate, .closeOnExec],
                permissions: [.ownerReadWrite])
        } catch {
            throw RegistryError(.file, "\(path): cannot write the bike cache: \(error)")
        }
        text = Array(#"{"version":\#(BikeCache.version),"fetchedAt":\#(fetchedAt),"source":"#.utf8)
        JSONString.append(source, to: &text)
        text += Array(#","validators":"#.utf8)
        JSONText.appendValidators(validators, to: &text)
        text += Array(#","bikes":["#.utf8)
    }

    deinit { try? descriptor?.close() }

    /// One more bike of the list.
    public func add(_ entry: ListedEntry) throws(RegistryError) {
        if !first { text.append(UInt8(ascii: ",")) }
        first = false
        JSONText.append(entry, to: &text)
        checksum.add(entry)
        if text.count >= 64 * 1024 { try flush() }
    }

    /// The list's end and its checksum, written and synced; the file is then ready for `BikeCache.commit`.
    public func finish() throws(RegistryError) -> ListChecksum {
        text += Array(#"],"checksum":""#.utf8) + Array(checksum.description.utf8) + Array(#""}"#.utf8)
        try flush()
        do {
            if let descriptor {
                try SystemCalls.sync(descriptor)
                try descriptor.close()
            }
            descriptor = nil
        } catch {
            throw RegistryError(.file, "\(path): cannot write the bike cache: \(error)")
        }
        return checksum
    }

    /// Removes the file: the list it was for was refused, or did not add up.
    public func abandon() {
        try? descriptor?.close()
        descriptor = nil
        try? SystemCalls.remove(FilePath(path))
    }

    private func flush() throws(RegistryError) {
        guard let descriptor, !text.isEmpty else { return }
        do {
            _ = try text.withUnsafeBytes { try descriptor.writeAll($0) }
        } catch {
            throw RegistryError(.file, "\(path): cannot write the bike cache: \(error)")
        }
        text.removeAll(keepingCapacity: true)
    }
}
