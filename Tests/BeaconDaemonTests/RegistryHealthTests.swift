import BeaconDelivery
import Testing

@testable import BeaconDaemon
@testable import BeaconRegistryClient

/// Which registry states make the daemon unhealthy (never stuck: that is capture's and the engine's), and which
/// are only warnings.
@Suite(.timeLimit(.minutes(20))) struct RegistryHealthTests {
    static let posting = PosterStatistics()

    static func sync(_ change: (inout RegistrySyncStatus) -> Void) -> RegistrySyncStatus {
        var status = RegistrySyncStatus(registry: "https://registry.example/api")
        change(&status)
        return status
    }

    @Test func aWorkingRegistryIsNoProblem() {
        #expect(
            StatusCollector.registryProblems(
                sync: Self.sync {
                    $0.consecutiveFailures = 2
                    $0.lastError = "timed out"
                }, posting: Self.posting, now: 0
            ).isEmpty)
        #expect(StatusCollector.warnings(sync: Self.sync { _ in }, deadLetters: 0).isEmpty)
    }

    @Test func heldSightingsAndARefusedKeyAreProblems() {
        var held = Self.posting
        held.held = "POST …: HTTP 401 …: the registry refused the API key"
        #expect(
            StatusCollector.registryProblems(sync: Self.sync { _ in }, posting: held, now: 0) == [
                "sightings held: \(held.held!)"
            ])
        let refused = Self.sync {
            $0.lastErrorStatus = 403
            $0.lastError = "GET …: HTTP 403"
            $0.consecutiveFailures = 1
        }
        #expect(
            StatusCollector.registryProblems(sync: refused, posting: Self.posting, now: 0) == [
                "the registry refuses the API key for the bike list (HTTP 403)"
            ])
        let moved = Self.sync {
            $0.lastErrorStatus = 301
            $0.consecutiveFailures = 1
        }
        #expect(
            StatusCollector.registryProblems(sync: moved, posting: Self.posting, now: 0).first?.contains("HTTP 301")
                == true)
    }

    @Test func aRegistryThatStopsAnsweringIsAProblemAfterThreeRefreshes() {
        let failing = Self.sync {
            $0.consecutiveFailures = 3
            $0.lastError = "GET …: timed out: no whole answer within 20 s"
        }
        #expect(
            StatusCollector.registryProblems(sync: failing, posting: Self.posting, now: 0)
                == ["the registry has not answered 3 refreshes in a row: GET …: timed out: no whole answer within 20 s"]
        )
        let asking = Self.sync { $0.requestStartedAt = 1_000 }
        #expect(
            StatusCollector.registryProblems(sync: asking, posting: Self.posting, now: 31_001)
                == ["the registry has been asked for the bike list for 30 s"])
        #expect(StatusCollector.registryProblems(sync: asking, posting: Self.posting, now: 29_000).isEmpty)
    }

    @Test func deadLettersAreAWarning() {
        #expect(
            StatusCollector.warnings(sync: Self.sync { _ in }, deadLetters: 2).first?.hasPrefix("2 dead letters:")
                == true)
    }
}
