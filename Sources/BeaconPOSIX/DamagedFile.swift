public import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A state file beacond cannot use (a truncated cache, an outbox that is not a database) is renamed, not
/// deleted: the daemon starts with a clean slate, and whoever looks later still has the bytes.
public enum DamagedFile {
    /// Renames `path` to `path.damaged-20261123T143345Z` (the UTC time `wallMilliseconds` since the epoch; with `-2`,
    /// `-3`… if that exists) and each existing `path + companion` (SQLite's `-wal`, which must never meet a new
    /// database) likewise. Returns the new name of `path`.
    public static func moveAside(_ path: String, companions: [String] = [], wallMilliseconds: Int64) throws(Errno)
        -> String
    {
        let stamp = Self.stamp(wallMilliseconds)
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

    /// `20261123T143345Z`: ISO 8601's basic form, which has no character a file name should not.
    static func stamp(_ wallMilliseconds: Int64) -> String {
        var seconds = time_t(wallMilliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    private static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
