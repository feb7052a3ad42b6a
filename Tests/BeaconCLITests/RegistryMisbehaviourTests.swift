import BeaconControl
import BeaconDaemon
import BeaconTestSupport
import Foundation
import RegistryTestServer
import Testing

/// The real daemon against a registry on loopback that misbehaves on purpose: a trickled answer on a first start,
/// a redirect and a refused key on every sighting, a 409 and a 400 on one each.
@Suite(.timeLimit(.minutes(20))) struct RegistryMisbehaviourTests {
    @Test func aFirstStartAgainstATricklingRegistryStillStarts() async throws {
        let cafe = try await CafeRun.start("beacond-trickle")
        try await withTeardown({ await cafe.stop() }) {
            // Headers at once, then a byte every half second for 500 s: only a deadline for the whole answer ends it.
            cafe.registry.inject([.trickle(every: .milliseconds(500), bytes: 1_000)])
            let notify = try NotifyListener(path: cafe.directory.file("notify.sock"))
            let started = Date()
            var arguments = try cafe.arguments()
            arguments[arguments.firstIndex(of: "0")!] = "1"  // the capture at its own pace: the daemon keeps running
            let daemon = try DaemonProcess(
                arguments, environment: ["NOTIFY_SOCKET": notify.path], logDirectory: cafe.directory.path,
                name: "trickle")
            var ready = false
            while !ready, Date().timeIntervalSince(started) < 45, daemon.isRunning {
                ready = notify.receive().joined().contains("READY=1")
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(ready, "no READY=1 within 45 s:\n\(daemon.stderr)")
            #expect(Date().timeIntervalSince(started) >= 29, "READY before the first start's patience ran out")
            // Capture started without a list once the first start had waited 30 s, and said so; the request carries on
            // (to its own deadline for a whole list, 120 s).
            #expect(
                daemon.stderr.contains("no bike list within 30 s of starting; capture starts without one"),
                "\(daemon.stderr)")
            let status = try #require(cafe.status())
            #expect(status.capture.state == "running")
            daemon.terminate()
            #expect(await daemon.waitForExit(seconds: 10) == 0)
        }
    }

    @Test func aRedirectOrARefusedKeyHoldsEverySightingUntilTheConfigurationChanges() async throws {
        let cafe = try await CafeRun.start("beacond-held")
        try await withTeardown({ await cafe.stop() }) {
            let expected = try await CafeRun.expectedSightingIDs()
            cafe.registry.answerEveryPost(with: 307)
            let daemon = try cafe.launch(["--exit-when-drained"], name: "held")
            let moved = await cafe.waitForStatus(seconds: 30) {
                $0.outbox.depth == expected.count && $0.capture.state == "finished" && !$0.healthy
            }
            let report = try #require(moved, "not every sighting held:\n\(daemon.stderr)")
            #expect(report.outbox.deadLetters == 0, "a redirect dead-lettered sightings")
            #expect(
                report.problems.contains {
                    $0.contains("sightings held") && $0.contains("the registry moved to https://registry.example")
                })
            #expect(
                report.problems.joined().contains("?key=REDACTED"), "the Location is shown redacted: \(report.problems)"
            )
            #expect(!report.stuck, "a registry problem does not starve the watchdog")
            #expect(cafe.registry.posts.isEmpty)

            // The key is refused instead: still held, and said so.
            cafe.registry.answerEveryPost(with: 401)
            daemon.process.send(SIGHUP)
            let refused = await cafe.waitForStatus(seconds: 20) {
                $0.problems.contains { $0.contains("refused the API key") }
            }
            #expect(
                refused?.outbox.depth == expected.count && refused?.outbox.deadLetters == 0,
                "\(String(describing: refused?.outbox))")

            // Fixed, and the configuration reloaded: everything goes at once, in order, and the daemon ends.
            cafe.registry.answerEveryPost(with: nil)
            daemon.process.send(SIGHUP)
            #expect(await daemon.waitForExit(seconds: 30) == 0, "\(daemon.stderr)")
            #expect(Set(cafe.registry.sightings.keys) == Set(expected))
        }
    }

    @Test func aConflictIsDeliveredAndABadRequestDeadLettersOnlyThatOne() async throws {
        let cafe = try await CafeRun.start("beacond-refused")
        try await withTeardown({ await cafe.stop() }) {
            let expected = try await CafeRun.expectedSightingIDs()
            cafe.registry.refuse(sightingID: expected[0], with: 409)
            cafe.registry.refuse(sightingID: expected[1], with: 400)
            let daemon = try cafe.launch([], name: "refused")
            let drained = await cafe.waitForStatus(seconds: 30) {
                $0.capture.state == "finished" && $0.outbox.depth == 0 && $0.outbox.delivered == expected.count - 1
                    && $0.outbox.deadLetters == 1
            }
            let report = try #require(drained, "\(daemon.stderr)")
            #expect(report.outbox.deadLetters == 1)
            #expect(report.healthy, "\(report.problems)")
            #expect(
                report.warnings.contains { $0.contains("1 dead letter") && $0.contains("retry-dead-letters") },
                "\(report.warnings)")
            #expect(Set(cafe.registry.sightings.keys) == Set(expected.dropFirst(2)), "every other sighting delivered")
            let text = try await BeacondRun(["status", "--control-socket", cafe.socket])
            #expect(text.stdout.contains("~ 1 dead letter"), "\(text.stdout)")

            // The registry is fixed: the dead letter goes back in the queue and is delivered.
            cafe.registry.refuse(sightingID: expected[1], with: nil)
            let retry = try await BeacondRun(["retry-dead-letters", "--control-socket", cafe.socket])
            #expect(
                retry.status == 0 && retry.stdout.contains("1 dead letter queued again"),
                "\(retry.stdout)\(retry.stderr)")
            let delivered = await cafe.waitForStatus(seconds: 20) { $0.outbox.deadLetters == 0 && $0.outbox.depth == 0 }
            #expect(delivered != nil && cafe.registry.sightings[expected[1]] != nil)
            daemon.terminate()
            #expect(await daemon.waitForExit(seconds: 10) == 0)
        }
    }
}
