import BeaconDelivery
import BeaconEngine
import BeaconOutbox
import BeaconRegistryClient
import BeaconTestSupport
import BeaconWire
import RegistryTestServer
import Testing

/// Sightings heard before the clock was synchronised: when they go, and with which times.
@Suite(.timeLimit(.minutes(20))) struct SightingClockTests {
    static let hour: Int64 = 3_600_000_000_000
    /// Queued at monotonic 100 s, the wall clock then 3 h behind the truth (fake-hwclock's last shutdown).
    static let pending = PendingTime(
        firstSeen: 90_000_000_000, lastSeen: 99_000_000_000, queuedAt: 100_000_000_000, bootID: "boot-1",
        offset: EngineHarness.origin.nanosecondsSinceEpoch - 3 * hour)

    static func reading(monotonic seconds: Int64, stepped: Bool, synchronized: Bool?, boot: String = "boot-1")
        -> ClockReading
    {
        let offset = EngineHarness.origin.nanosecondsSinceEpoch - (stepped ? 0 : 3 * hour)
        return ClockReading(
            wall: seconds * 1_000_000_000 + offset, monotonic: seconds * 1_000_000_000, synchronized: synchronized,
            bootID: boot)
    }

    @Test func itWaitsWhileTheClockIsUnsynchronised() {
        #expect(
            SightingClock.decide(
                Self.pending, reading: Self.reading(monotonic: 160, stepped: false, synchronized: false),
                limit: .seconds(600))
                == .wait(.seconds(540)))
    }

    @Test func onceSynchronisedItsTimesAreLabelledWithTheClockThen() throws {
        // NTP stepped the clock 3 h forward at some point: the labels use the offset now, right whatever the step.
        let decision = SightingClock.decide(
            Self.pending, reading: Self.reading(monotonic: 400, stepped: true, synchronized: true), limit: .seconds(600)
        )
        #expect(decision == .settle(offset: EngineHarness.origin.nanosecondsSinceEpoch, synchronized: true))
        let sighting = OutgoingSighting(
            makeSightings(1)[0], stationID: "cafe-1", latitude: 1, longitude: 2, offset: Self.pending.offset)
        guard case .settle(let offset, let synchronized) = decision else {
            Issue.record("not settled")
            return
        }
        let settled = sighting.settled(Self.pending, offset: offset, synchronized: synchronized)
        let fields = try #require(FlatJSON.object(settled.json))
        #expect(
            fields["firstSeen"] == "2024-06-01T08:01:30.000000Z" && fields["lastSeen"] == "2024-06-01T08:01:39.000000Z")
        #expect(fields["date"] == fields["lastSeen"] && fields["clockSynchronized"] == nil)
    }

    @Test func afterTheLimitItGoesWithTheBestTimeKnownMarkedUnsynchronised() {
        #expect(
            SightingClock.decide(
                Self.pending, reading: Self.reading(monotonic: 700, stepped: false, synchronized: false),
                limit: .seconds(600))
                == .settle(offset: Self.pending.offset, synchronized: false))
    }

    @Test func fromAnotherBootItsMonotonicTimesCannotBeLabelledAnew() {
        #expect(
            SightingClock.decide(
                Self.pending, reading: Self.reading(monotonic: 5, stepped: true, synchronized: true, boot: "boot-2"),
                limit: .seconds(600))
                == .settle(offset: Self.pending.offset, synchronized: false))
    }
}
