import BeaconTestSupport
import DaemonSupport
import Testing

@testable import BeaconDelivery

/// The poster's decisions alone (`PosterPolicy`): no server, no clock, a seeded generator. What `PosterTests` can
/// only sample over real HTTP in real time (a backoff's gaps, a Retry-After, a hold and its resume) is exact here.
@Suite(.timeLimit(.minutes(20))) struct PosterPolicyTests {
    typealias Seeded = SeededRandom

    static let retry = DeliveryOutcome.retry(after: nil, reason: "POST /sightings: HTTP 503")

    /// Applies each outcome as the poster does (the policy after a step taken only once its record is written).
    static func run(_ outcomes: [DeliveryOutcome], policy: inout PosterPolicy) -> [PosterPolicy.Step] {
        var random = Seeded(state: 11)
        return outcomes.map { outcome in
            let (step, next) = policy.step(for: outcome, using: &random)
            policy = next
            return step
        }
    }

    @Test func failuresWaitADoublingBackoffAndADeliveryStartsItAgain() {
        var policy = PosterPolicy(backoff: Backoff(base: .milliseconds(100), cap: .milliseconds(800)))
        let steps = Self.run(
            [Self.retry, Self.retry, Self.retry, Self.retry, Self.retry, .delivered, Self.retry], policy: &policy)
        let windows: [Duration] = [
            .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
            .milliseconds(800),
        ]
        for (step, window) in zip(steps, windows) {
            #expect(step.record == .attempt("POST /sightings: HTTP 503") && step.wake == .stop)
            #expect(step.wait >= window / 2 && step.wait <= window, "\(step.wait) outside \(window / 2)...\(window)")
        }
        #expect(steps[5] == PosterPolicy.Step(record: .delivered, wait: .zero, wake: .stop))
        #expect(steps[6].wait <= .milliseconds(100), "a delivery starts the backoff again")
        #expect(policy.statistics.retries == 6 && policy.statistics.delivered == 1)
        #expect(policy.statistics.lastError == "POST /sightings: HTTP 503")
    }

    /// Issue 52: a registry that answered 503 (with its `Retry-After: 5`) for 30 s is tried again within 10 s of its
    /// return, whatever the jitter drew.
    @Test(arguments: 0..<20 as Range<UInt64>) func aRegistryAwayForHalfAMinuteIsTriedWithinTenSecondsOfItsReturn(
        seed: UInt64
    ) {
        var policy = PosterPolicy(backoff: Backoff.sightingRetries)
        var random = Seeded(state: seed)
        var waited = Duration.zero
        var waits: [Duration] = []
        // Retries until the next one falls past the outage's end: the one that finds the registry back.
        while waited < .seconds(30) {
            let (step, next) = policy.step(for: .retry(after: .seconds(5), reason: "HTTP 503"), using: &random)
            policy = next
            waited += step.wait
            waits.append(step.wait)
        }
        #expect(waited - .seconds(30) <= .seconds(10), "\(waits)")
        #expect(waits.allSatisfy { $0 >= .seconds(5) && $0 <= .seconds(8) }, "\(waits)")
    }

    @Test func aRetryAfterIsNeverCutShortButDoesNotShortenTheBackoff() {
        var policy = PosterPolicy(backoff: Backoff(base: .seconds(2), cap: .seconds(600)))
        let steps = Self.run(
            [
                .retry(after: .seconds(30), reason: "429"), .retry(after: .milliseconds(1), reason: "503"),
            ], policy: &policy)
        #expect(steps[0].wait == .seconds(30))
        #expect(steps[1].wait >= .seconds(2) && steps[1].wait <= .seconds(4))
    }

    @Test func aHoldWaitsSlowlyAndADeliveryEndsIt() {
        var policy = PosterPolicy(backoff: Backoff(base: .seconds(2), cap: .seconds(600)))
        let held = DeliveryOutcome.held(reason: "the registry refused the API key")
        var steps = Self.run([held, held], policy: &policy)
        #expect(
            steps.allSatisfy { $0.wake == .resumeOrStop && $0.record == .attempt("the registry refused the API key") })
        #expect(steps[0].wait >= .seconds(30) && steps[0].wait <= .seconds(60))
        #expect(steps[1].wait >= .seconds(60) && steps[1].wait <= .seconds(120))
        // What ends a hold's wait early, a resume, is the poster's to count (SightingPoster.resume): a SIGHUP in
        // RegistryMisbehaviourTests, a reconnection in MQTTDaemonTests.
        #expect(policy.statistics.held == "the registry refused the API key")
        steps = Self.run([.delivered, held], policy: &policy)
        #expect(policy.statistics.held == "the registry refused the API key")
        #expect(steps[1].wait <= .seconds(60), "a delivery starts the hold's backoff again")
        _ = Self.run([.delivered], policy: &policy)
        #expect(policy.statistics.held == nil && policy.statistics.lastError == nil)
    }

    @Test func aRefusedSightingIsDeadLetteredAndTheNextGoesAtOnce() {
        var policy = PosterPolicy(backoff: Backoff(base: .seconds(2), cap: .seconds(600)))
        let steps = Self.run([.refused(reason: "HTTP 422", code: 422)], policy: &policy)
        #expect(steps == [PosterPolicy.Step(record: .dead(code: 422, reason: "HTTP 422"), wait: .zero, wake: .stop)])
        #expect(policy.statistics.rejected == 1 && policy.statistics.retries == 0)
    }

    @Test func aStepNotTakenChangesNothing() {
        // The poster takes the policy after a step only once the outbox has the record: a failed write counts nothing.
        let policy = PosterPolicy(backoff: Backoff(base: .seconds(2), cap: .seconds(600)))
        var random = Seeded(state: 3)
        _ = policy.step(for: Self.retry, using: &random)
        #expect(policy.statistics.retries == 0)
        let (first, _) = policy.step(for: Self.retry, using: &random)
        #expect(first.wait <= .seconds(2), "still the first attempt's window")
    }
}
