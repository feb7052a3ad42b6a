import CSystemShims

#if canImport(Glibc)
import Glibc
#endif

/// The C library calls Swift's Glibc module leaves out (CSystemShims defines them with `_GNU_SOURCE`), for the rest
/// of the package: only this edge and capture import the C module.
public enum SystemExtras {
    /// Names the calling thread for `top -H` and the journal's thread field; at most 15 bytes are kept.
    @discardableResult
    public static func setThreadName(_ name: String) -> Bool {
        CSystemShims_setThreadName(String(name.utf8.prefix(15)) ?? name) == 0
    }

    /// The kernel's clock discipline (adjtimex(2), read only): its maximum error in microseconds and its status
    /// word; nil with `errno` set when the call is refused (a seccomp filter, say).
    public static func clockDiscipline() -> (maximumErrorMicroseconds: Int, status: Int32)? {
        var maximumError = 0
        var status: Int32 = 0
        guard CSystemShims_readClockDiscipline(&maximumError, &status) >= 0 else { return nil }
        return (maximumError, status)
    }
}
