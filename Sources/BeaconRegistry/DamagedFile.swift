public import BeaconWire
#if canImport(Glibc)
import Glibc
#endif
public import SystemPackage

/// A state file beacond cannot use (a truncated cache, an outbox that is not a database) is renamed, not
/// deleted: the daemon starts with a clean slate, and whoever looks later still has the bytes.
public enum DamagedFile {
    /// Renames `path` to `path.damaged-20261123T143345Z` (with `-2`, `-3`… if that exists) and each existing
    /// `path + companion` (SQLite's `-wal`, which must never meet a new database) likewise.
    /// Returns the new name of `path`.
    public static func moveAside(_ path: String, companions: [String] = [], now: CaptureTime) throws(Errno) -> String {
        let stamp = String(now.iso8601.prefix(19).filter { $0 != "-" && $0 != ":" }) + "Z"
        var target = "\(path).damaged-\(stamp)"
        var attempt = 1
        while exists(target) {
            attempt += 1
            target = "\(path).damaged-\(stamp)-\(attempt)"
        }
        for companion in companions where exists(path + companion) {
            try SystemCalls.rename(FilePath(path + companion), FilePath(target + companion))
        }
        try SystemCalls.rename(FilePath(path), FilePath(target))
        return target
    }

    private static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
