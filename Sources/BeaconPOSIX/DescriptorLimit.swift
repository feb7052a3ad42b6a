#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open file descriptors (RLIMIT_NOFILE). A server sized for thousands of connections needs
/// as many descriptors; the soft limit a process starts with is often 1024 (systemd's default, whatever the unit's
/// hard limit), and a process may raise its own soft limit up to the hard one.
public enum DescriptorLimit {
    /// The soft limit after raising it towards `wanted` (never past the hard limit, never lowering it).
    @discardableResult
    public static func raise(toward wanted: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        let target = rlim_t(clamping: max(0, wanted))
        if limit.rlim_cur < target {
            var raised = limit
            raised.rlim_cur = min(target, limit.rlim_max)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }
}
