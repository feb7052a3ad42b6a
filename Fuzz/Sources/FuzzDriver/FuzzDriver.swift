#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer's entry point for programs that have their own `main` (SwiftPM renames an executable's `main`, so
/// libFuzzer's cannot be used); `-sanitize=fuzzer` links the library that defines it.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// Hands the command line to libFuzzer (`-max_total_time=N`, corpus directories, a crash file to replay) and
/// exits with its status. `target` gets each input; an empty input may come with a nil pointer.
public func runFuzzer(_ target: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, target))
}

/// The input as a buffer (empty for a nil pointer).
public func input(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(start: data, count: data == nil ? 0 : size)
}
