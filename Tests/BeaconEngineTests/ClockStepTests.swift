import BeaconEngine
import BeaconTestSupport
import BeaconWire
import Testing

/// A Pi's wall clock stepping under a running daemon (NTP after fake-hwclock: +8 h; a correction back: −1 h; a
/// small one: +30 s) while three bikes stay in range. Live capture feeds the engine monotonic times, as the daemon
/// does (`LiveCapture.timeBase`), so the steps change only the labels on what leaves the Pi: no bike leaves and
/// comes back, and every sighting keeps the id it has with no step. Fed the wall clock instead, as beacond was
/// before, the same steps close and reopen every visit.
@Suite(.timeLimit(.minutes(20))) struct ClockStepTests {
    static let hour = 3_600.0
    static let minors: [UInt16] = [11, 12, 13]

    /// The wall clock's error at monotonic second `t`: stepped +8 h at 300 s, −1 h at 600 s, +30 s at 900 s.
    static func step(_ t: Double, stepping: Bool) -> Double {
        guard stepping else { return 0 }
        return (t >= 300 ? 8 * hour : 0) + (t >= 600 ? -hour : 0) + (t >= 900 ? 30 : 0)
    }

    /// The three bikes heard every 2 s for 20 minutes, the engine ticking every second; `engineOnWall` feeds the
    /// engine the wall clock instead of the monotonic one. Each sighting with the wall time it would be labelled.
    static func run(stepping: Bool, engineOnWall: Bool = false) -> [(sighting: Sighting, labelledLastSeen: CaptureTime)]
    {
        let list = BikeList(entries: minors.map { .init(id: "bike-\($0)", minor: $0, missing: true) })
        let configuration = EngineConfiguration(stationID: "cafe-1")
        let origin = EngineHarness.origin
        func time(_ t: Double) -> CaptureTime {
            origin.advanced(by: .seconds(t + (engineOnWall ? step(t, stepping: stepping) : 0)))
        }
        var engine = RangingEngine<CaptureTime>(
            configuration: configuration, missing: MissingBikeSet(list: list, regions: configuration.regions),
            startingAt: time(0))
        var out: [(Sighting, CaptureTime)] = []
        var sightings: [Sighting] = []
        var now = time(0)
        func take(_ t: Double) {
            // The label: the sighting's own (monotonic) time plus the offset between the clocks at that moment.
            let offset = Int64(step(t, stepping: stepping) * 1e9)
            for sighting in sightings {
                let labelled =
                    engineOnWall
                    ? sighting.lastSeen
                    : CaptureTime(nanosecondsSinceEpoch: sighting.lastSeen.nanosecondsSinceEpoch + offset)
                out.append((sighting, labelled))
            }
            sightings.removeAll()
        }
        var t = 0.0
        while t < 1_200 {
            if t.truncatingRemainder(dividingBy: 2) == 0 {
                for minor in minors {
                    let advert = EngineHarness.advert(minor: minor, at: 0)
                    now = max(now, time(t))
                    engine.observe(
                        BeaconAdvert(time: time(t), beacon: advert.beacon, rssi: advert.rssi, adapter: 0), at: now,
                        into: &sightings)
                }
            }
            now = max(now, time(t))
            engine.expire(now: now, into: &sightings)
            take(t)
            t += 1
        }
        engine.finish(into: &sightings)
        take(t)
        return out
    }

    static func kinds(_ run: [(sighting: Sighting, labelledLastSeen: CaptureTime)], minor: UInt16) -> [SightingKind] {
        run.filter { $0.sighting.beacon.minor == minor }.map(\.sighting.kind)
    }

    @Test func stepsOfTheWallClockNeitherCloseVisitsNorChangeIds() {
        let steady = Self.run(stepping: false)
        let stepped = Self.run(stepping: true)
        for minor in Self.minors {
            #expect(
                Self.kinds(stepped, minor: minor) == [.enter, .update, .exit],
                "bike \(minor): \(Self.kinds(stepped, minor: minor))")
        }
        #expect(stepped.map(\.sighting.id) == steady.map(\.sighting.id), "one visit keeps one id through every step")
        // The labels follow the clock as it was when each sighting left: the update at 600 s after +8 h −1 h.
        for (steadyOne, steppedOne) in zip(steady, stepped) where steppedOne.sighting.kind == .update {
            #expect(
                steppedOne.labelledLastSeen.nanosecondsSinceEpoch - steadyOne.labelledLastSeen.nanosecondsSinceEpoch
                    == 7 * 3_600_000_000_000)
        }
    }

    @Test func fedTheWallClockTheSameStepsCloseAndReopenEveryVisit() {
        let wallFed = Self.run(stepping: true, engineOnWall: true)
        for minor in Self.minors {
            let kinds = Self.kinds(wallFed, minor: minor)
            #expect(zip(kinds, kinds.dropFirst()).contains { $0 == .exit && $1 == .enter }, "bike \(minor): \(kinds)")
        }
    }
}
