import BeaconControl
import BeaconDaemon
import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// Sightings committed to the outbox, the daemon killed before it could deliver them, and then the files around
/// the outbox lost or damaged, as after a crash on a cheap SD card: a committed sighting must be in the outbox's
/// own file (nothing else is needed to deliver it), and damage to that file must be found and said.
@Suite(.timeLimit(.minutes(20))) struct OutboxJournalTests {
    /// A state directory whose outbox holds every sighting of the café capture, undelivered, the daemon SIGKILLed.
    static func killedWithAFullOutbox(_ cafe: CafeRun, expected: Int) async throws {
        cafe.registry.answerEveryPost(with: 503)
        let daemon = try cafe.launch([], name: "killed")
        let full = await cafe.waitForStatus(seconds: 30) {
            $0.capture.state == "finished" && $0.outbox.depth == expected
        }
        try #require(full != nil, "the outbox never held every sighting:\n\(daemon.stderr)")
        daemon.process.send(SIGKILL)
        _ = await daemon.waitForExit(seconds: 10)
        cafe.registry.answerEveryPost(with: nil)
    }

    static let quiet = Fixtures.repositoryRoot.appendingPathComponent("Fixtures/edge/h4.btsnoop").path

    @Test(arguments: ["the -wal removed", "the -wal scribbled", "the -journal removed", "the -journal scribbled"])
    func committedSightingsSurviveTheLossOfEveryFileButTheOutbox(damage: String) async throws {
        let cafe = try await CafeRun.start("beacond-journal")
        try await withTeardown({ await cafe.stop() }) {
            let expected = try await CafeRun.expectedSightingIDs()
            try await Self.killedWithAFullOutbox(cafe, expected: expected.count)
            let outbox = cafe.state + "/outbox.sqlite"
            let companion = outbox + (damage.contains("wal") ? "-wal" : "-journal")
            if FileManager.default.fileExists(atPath: companion) {
                if damage.hasSuffix("removed") {
                    try FileManager.default.removeItem(atPath: companion)
                } else {
                    var bytes = try Data(contentsOf: URL(fileURLWithPath: companion))
                    for index in stride(from: bytes.count / 3, to: bytes.count, by: 97) { bytes[index] ^= 0x5A }
                    try bytes.write(to: URL(fileURLWithPath: companion))
                }
            }
            let after = try cafe.launch(["--exit-when-drained"], capture: Self.quiet, name: "after")
            #expect(await after.waitForExit(seconds: 60) == 0, "\(after.stderr)")
            #expect(
                Set(cafe.registry.sightings.keys) == Set(expected),
                "\(damage): \(expected.count - cafe.registry.sightings.count) sightings lost")
        }
    }

    @Test func damageToTheOutboxItselfIsFoundAndSaid() async throws {
        let cafe = try await CafeRun.start("beacond-journal")
        try await withTeardown({ await cafe.stop() }) {
            let expected = try await CafeRun.expectedSightingIDs()
            try await Self.killedWithAFullOutbox(cafe, expected: expected.count)
            let outbox = cafe.state + "/outbox.sqlite"
            let bytes = try Data(contentsOf: URL(fileURLWithPath: outbox))
            let roots = try DamagedStateTests.rootPages(
                of: ["outbox"], in: bytes, scratch: cafe.state + "/pages.sqlite")
            var torn = bytes
            for page in roots { torn.replaceSubrange((page - 1) * 4096..<page * 4096, with: Data(count: 4096)) }
            try torn.write(to: URL(fileURLWithPath: outbox))
            let after = try cafe.launch(["--exit-when-drained"], capture: Self.quiet, name: "after")
            #expect(await after.waitForExit(seconds: 60) == 0, "\(after.stderr)")
            #expect(after.stderr.contains("outbox damaged; moved aside"), "\(after.stderr)")
            #expect(after.stderr.contains("its undelivered sightings are in the moved file"), "\(after.stderr)")
        }
    }
}
