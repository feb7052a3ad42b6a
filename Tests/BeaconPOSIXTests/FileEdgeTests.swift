import BeaconPOSIX
import Foundation
import SystemPackage
import Testing

/// The POSIX edge on real files in a temporary directory.
@Suite(.timeLimit(.minutes(20))) struct FileEdgeTests {
    private func directory() throws -> String {
        let path = NSTemporaryDirectory() + "beacond-posix-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func wholeFileReadsUpToItsLimitAndNamesTheLimitExactly() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/key"
        try Data(repeating: 0x6B, count: 4_096).write(to: URL(fileURLWithPath: path))
        #expect(try WholeFile.read(path: path, limit: 4_096).count == 4_096)
        try Data(repeating: 0x6B, count: 4_097).write(to: URL(fileURLWithPath: path))
        #expect(throws: FileReadError.self) { try WholeFile.read(path: path, limit: 4_096) }
        do {
            _ = try WholeFile.read(path: path, limit: 4_096)
        } catch {
            #expect(error.description == "\(path): larger than the 4096 bytes limit")
            #expect(error.errno == nil)
        }
        do {
            _ = try WholeFile.read(path: folder + "/absent", limit: 1 << 20)
            Issue.record("a missing file was read")
        } catch {
            #expect(error.errno == .noSuchFileOrDirectory, "told apart by its errno")
            #expect(error.reason == "no such file or directory")
        }
    }

    @Test func chunkedFileHandsOverEveryByteAndRefusesMoreThanItsLimit() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/list"
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var read: [UInt8] = []
        #expect(try ChunkedFile.read(path: path, limit: 200_000, chunk: 4_096) { read += $0 } == 200_000)
        #expect(read == bytes)
        #expect(throws: ChunkedFileError.self) { try ChunkedFile.read(path: path, limit: 199_999) { _ in } }
        #expect(try ChunkedFile.read(path: folder + "/absent", limit: 10) { _ in } == nil)
    }

    @Test func aDamagedFileAndItsCompanionsAreMovedAsideUnderOneUTCStamp() throws {
        let folder = try directory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/outbox.sqlite"
        for name in [path, path + "-wal"] { try Data("x".utf8).write(to: URL(fileURLWithPath: name)) }
        // 2026-11-23T14:33:45.678Z
        let moment: Int64 = 1_795_444_425_678
        let first = try DamagedFile.moveAside(path, companions: ["-wal", "-shm"], wallMilliseconds: moment)
        #expect(first == path + ".damaged-20261123T143345Z")
        #expect(
            FileManager.default.fileExists(atPath: first + "-wal")
                && !FileManager.default.fileExists(atPath: first + "-shm"))
        #expect(!FileManager.default.fileExists(atPath: path) && !FileManager.default.fileExists(atPath: path + "-wal"))
        try Data("y".utf8).write(to: URL(fileURLWithPath: path))
        #expect(
            try DamagedFile.moveAside(path, wallMilliseconds: moment) == path + ".damaged-20261123T143345Z-2",
            "an earlier one is kept")
    }

    @Test func theClocksMoveForwardTogether() {
        let wall = SystemTime.wallMilliseconds()
        let monotonic = SystemTime.monotonicNanoseconds()
        SystemTime.sleep(milliseconds: 20)
        #expect(SystemTime.monotonicNanoseconds() - monotonic >= 20_000_000)
        #expect(abs(SystemTime.wallMilliseconds() - wall - 20) < 5_000)
        #expect(abs(SystemTime.wallNanoseconds() / 1_000_000 - SystemTime.wallMilliseconds()) <= 1)
    }
}
