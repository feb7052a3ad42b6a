public import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// The calls swift-system does not wrap, with its error type.
public enum SystemCalls {
    public static func rename(_ from: FilePath, _ to: FilePath) throws(Errno) {
        let result = from.withPlatformString { source in
            to.withPlatformString { destination in Glibc.rename(source, destination) }
        }
        if result != 0 { throw Errno(rawValue: errno) }
    }

    /// unlink(2); a file that is not there is no error.
    public static func remove(_ path: FilePath) throws(Errno) {
        if path.withPlatformString({ Glibc.unlink($0) }) != 0, errno != ENOENT { throw Errno(rawValue: errno) }
    }

    /// fsync(2), retried on EINTR.
    public static func sync(_ descriptor: FileDescriptor) throws(Errno) {
        if retryingOnInterrupt({ fsync(descriptor.rawValue) }) != 0 { throw Errno(rawValue: errno) }
    }

    /// st_mtime in nanoseconds.
    public static func modificationTime(_ descriptor: FileDescriptor) throws(Errno) -> Int64 {
        var info = stat()
        guard fstat(descriptor.rawValue, &info) == 0 else { throw Errno(rawValue: errno) }
        return Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }
}
