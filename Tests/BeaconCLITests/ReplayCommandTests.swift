import BeaconTestSupport
import Foundation
import Testing

/// Runs the built `beacond` binary as a user would and checks what it prints and how it exits.
@Suite(.timeLimit(.minutes(20))) struct ReplayCommandTests {
    func beacond(_ arguments: String...) async throws -> BeacondRun { try await BeacondRun(arguments) }

    static func edge(_ name: String) -> String { Fixtures.edgeDirectory.appendingPathComponent(name).path }

    @Test func jsonlPrintsExactlyTheExpectedObjects() async throws {
        let capture = Fixtures.edgeDirectory.appendingPathComponent("sections.pcapng")
        let run = try await beacond("replay", "--format", "jsonl", capture.path)
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(try lines.map { try JSONValue.object(from: $0) } == Fixtures.expected(for: capture))
        let keys = ["frame", "time", "adapter", "addr", "addrType", "uuid", "major", "minor", "power", "rssi"]
        #expect(
            lines.allSatisfy { line in
                (try? JSONValue.object(from: line).keys.sorted()) == keys.sorted()
            })
    }

    @Test func summaryOnStderrCountsDropsByReason() async throws {
        let run = try await beacond("replay", Self.edge("h4.btsnoop"))
        #expect(run.status == 0)
        #expect(run.stderr.contains("advertising data over 31 bytes"))
        #expect(run.stderr.contains("truncated HCI event"))
        #expect(run.stderr.contains("8 iBeacon"))
    }

    @Test func tableFitsAnEightyColumnTerminal() async throws {
        let run = try await beacond("replay", Self.edge("h4-phdr-ns-be.pcap"), Self.edge("monitor.btsnoop"))
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count > 16)
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(lines.filter { $0.count > 80 })")
        #expect(run.stdout.contains("21EECF71-D5C7-4A00-9B90-27C94B5146EA"))
    }

    @Test func regionFilterKeepsOnlyItsBeacons() async throws {
        let all = try await beacond("replay", "--format", "jsonl", Self.edge("h4.btsnoop"))
        let region = try await beacond(
            "replay", "--format", "jsonl", "--region", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", Self.edge("h4.btsnoop"))
        let major = try await beacond(
            "replay", "--format", "jsonl", "--region", "21EECF71-D5C7-4A00-9B90-27C94B5146EA:1", Self.edge("h4.btsnoop")
        )
        #expect(all.stdout.split(separator: "\n").count == 8)
        #expect(region.stdout.split(separator: "\n").count == 1)
        #expect(major.stdout.split(separator: "\n").count == 7)
    }

    @Test func unreadableOrUnknownFileExitsTwoWithOneLine() async throws {
        let missing = try await beacond("replay", "/nonexistent.pcap")
        #expect(missing.status == 2)
        #expect(missing.stderr == "beacond: /nonexistent.pcap: no such file or directory\n")
        #expect(missing.stdout.isEmpty)
        let binary = try await beacond("replay", Self.edge("h4.btsnoop"), BeacondRun.binary.path)
        #expect(binary.status == 2)
        #expect(binary.stderr.split(separator: "\n").count == 1)
        #expect(binary.stdout.isEmpty, "nothing is printed before every file has been opened")
    }

    @Test func truncatedFileStillExitsZero() async throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.edge("h4.btsnoop")))
        let cut = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-cut-\(UUID()).btsnoop")
        try bytes.prefix(bytes.count - 5).write(to: cut)
        defer { try? FileManager.default.removeItem(at: cut) }
        let run = try await beacond("replay", cut.path)
        #expect(run.status == 0)
        #expect(run.stderr.contains("truncated record at end of file"))
    }

    @Test func usageErrorsAndHelp() async throws {
        #expect(try await beacond("replay").status == 64)
        #expect(try await beacond("replay", "--format", "xml", Self.edge("h4.btsnoop")).status == 64)
        let help = try await beacond("replay", "--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("hcidump"))
    }
}
