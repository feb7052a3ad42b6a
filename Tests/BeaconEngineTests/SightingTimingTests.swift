import BeaconEngine
import BeaconTestSupport
import BeaconWire
import Testing

/// Enter, update and exit timing on a hand-driven clock.
@Suite(.timeLimit(.minutes(20))) struct SightingTimingTests {
    @Test func enterComesWithTheFirstAdvert() {
        var harness = EngineHarness(missingMinors: [7])
        let first = harness.hear(minor: 7, at: 5)
        #expect(first.map(\.kind) == [.enter])
        #expect(first.first?.bikeID == "bike-7")
        #expect(first.first?.count == 1)
        #expect(EngineHarness.seconds(first[0].firstSeen) == 5 && EngineHarness.seconds(first[0].lastSeen) == 5)
        #expect(harness.hear(minor: 7, at: 6).isEmpty)
    }

    @Test func atMostOneUpdatePerReportInterval() {
        var harness = EngineHarness(missingMinors: [7])
        harness.hear(minor: 7, every: 1, from: 0, until: 1_500)  // 25 minutes at one advert a second
        let kinds = harness.sightings.map(\.kind)
        #expect(kinds == [.enter, .update, .update])
        // The first advert at or after 10 minutes from the last report, then 10 minutes from that one.
        #expect(harness.sightings.map { EngineHarness.seconds($0.lastSeen) } == [0, 600, 1_200])
        #expect(harness.sightings[1].count == 601)
    }

    @Test func updateWaitsForTheNextAdvertAfterTheInterval() {
        var harness = EngineHarness(missingMinors: [7])
        harness.hear(minor: 7, every: 1, from: 0, until: 599.5)
        harness.hear(minor: 7, at: 599.999)
        #expect(harness.sightings.count == 1)
        let update = harness.hear(minor: 7, at: 600)
        #expect(update.map(\.kind) == [.update])
    }

    @Test func exitAfterTheTimeoutAtTheLastSeenTime() {
        var harness = EngineHarness(missingMinors: [7])
        harness.hear(minor: 7, every: 1, from: 0, until: 10)  // last heard at 9 s
        #expect(harness.tick(at: 39).isEmpty, "exactly 30 s of silence is not yet an exit")
        let exit = harness.tick(at: 39.001)
        #expect(exit.map(\.kind) == [.exit])
        #expect(EngineHarness.seconds(exit[0].lastSeen) == 9)
        #expect(exit[0].count == 10)
        #expect(harness.engine.openVisits == 0)
    }

    @Test func heardJustBeforeTheTimeoutStaysOneVisit() {
        var harness = EngineHarness(missingMinors: [7])
        harness.hear(minor: 7, at: 0)
        harness.hear(minor: 7, at: 30)
        harness.tick(at: 30)
        harness.hear(minor: 7, at: 59.9)
        #expect(harness.sightings.map(\.kind) == [.enter])
        #expect(harness.engine.openVisits == 1)
    }

    @Test func aReturnAfterTheTimeoutIsANewVisit() {
        var harness = EngineHarness(missingMinors: [7])
        harness.hear(minor: 7, at: 0)
        harness.hear(minor: 7, at: 31)  // the sweep at 31 s closes the first visit before this advert counts
        #expect(harness.sightings.map(\.kind) == [.enter, .exit, .enter])
        #expect(harness.sightings[0].id != harness.sightings[2].id)
        #expect(EngineHarness.seconds(harness.sightings[2].firstSeen) == 31)
    }

    @Test func slowBeaconsGetALongerTimeout() {
        // One advert every 10 s: after a few, the timeout is 5 intervals (50 s), so a 40 s gap (three lost
        // adverts) does not split the visit, as a fixed 30 s would.
        var harness = EngineHarness(missingMinors: [7])
        harness.hear(minor: 7, every: 10, from: 0, until: 100)
        harness.tick(at: 130)
        harness.hear(minor: 7, at: 130)
        #expect(harness.sightings.map(\.kind) == [.enter])

        // A steady 10 s beacon leaves 50 s after its last advert, not 30.
        var steady = EngineHarness(missingMinors: [7])
        steady.hear(minor: 7, every: 10, from: 0, until: 100)  // last heard at 90 s
        #expect(steady.tick(at: 139.5).isEmpty)
        #expect(steady.tick(at: 140.5).map(\.kind) == [.exit])
    }

    @Test func theLongerTimeoutIsCapped() {
        let configuration = EngineConfiguration(stationID: "test", maximumExitTimeout: .seconds(120))
        var harness = EngineHarness(configuration: configuration, missingMinors: [7])
        // Intervals must be under the base timeout to be observed at all; 5 x 25 s would be 125 s.
        harness.hear(minor: 7, every: 25, from: 0, until: 250)  // last heard at 225 s
        #expect(harness.tick(at: 225 + 120).isEmpty)
        #expect(harness.tick(at: 225 + 120.5).map(\.kind) == [.exit])
    }

    @Test func bikesThatAreNotMissingProduceNothing() {
        var harness = EngineHarness(missingMinors: [7])
        harness.hear(minor: 8, every: 1, from: 0, until: 1_300)
        harness.tick(at: 2_000)
        harness.hear(minor: 9, at: 2_001)
        harness.finish()
        #expect(harness.sightings.isEmpty)
        #expect(harness.engine.counters.visitsOpened == 2)
    }

    @Test func beaconsOutsideTheRegionsAreIgnored() {
        var harness = EngineHarness(missingMinors: [7])
        harness.hear(minor: 7, at: 0, major: 2)
        harness.hear(minor: 7, at: 1, uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!)
        #expect(harness.sightings.isEmpty)
        #expect(harness.engine.counters.outsideRegions == 2)
        #expect(harness.engine.openVisits == 0)
    }

    @Test func finishClosesOpenVisitsAtTheirLastSeenTime() {
        var harness = EngineHarness(missingMinors: [7, 8])
        harness.hear(minor: 8, at: 0)
        harness.hear(minor: 7, at: 1)
        harness.hear(minor: 8, at: 12)
        let exits = harness.finish()
        #expect(exits.map(\.bikeID) == ["bike-7", "bike-8"], "in last-seen order")
        #expect(exits.map { EngineHarness.seconds($0.lastSeen) } == [1, 12])
        #expect(harness.engine.openVisits == 0)
    }

    @Test func sightingIDsAreStableAndDistinct() {
        func run() -> [Sighting] {
            var harness = EngineHarness(missingMinors: [7, 8])
            harness.hear(minor: 7, every: 1, from: 0, until: 1_300)
            harness.hear(minor: 8, every: 2, from: 100, until: 300)
            harness.finish()
            return harness.sightings
        }
        let first = run()
        let second = run()
        #expect(first == second, "the same input gives the same sightings, ids included")
        #expect(Set(first.map(\.id)).count == first.count, "every event has its own id")
        // The id depends on the station too.
        var other = EngineHarness(configuration: EngineConfiguration(stationID: "other"), missingMinors: [7])
        other.hear(minor: 7, at: 0)
        #expect(other.sightings[0].id != first[0].id)
        #expect(first[0].id.description.count == 36)
        #expect(Array(first[0].id.description)[14] == "8", "RFC 9562 version 8")
    }

    @Test func stationBeaconSilenceMakesCaptureUnhealthy() {
        let station = BeaconIdentity(uuid: BeaconRegion.findMyBike.uuid, major: 1, minor: 1)
        let configuration = EngineConfiguration(
            stationID: "test", stationBeacon: station, stationSilenceLimit: .seconds(120))
        var harness = EngineHarness(configuration: configuration, missingMinors: [1])
        #expect(harness.engine.station(now: .seconds(120)).healthy, "silence is counted from the start")
        #expect(!harness.engine.station(now: .seconds(121)).healthy)
        harness.hear(minor: 1, at: 200)
        let status = harness.engine.station(now: .seconds(250))
        #expect(status.healthy && status.silence == .seconds(50))
        #expect(status.lastHeard.map(EngineHarness.seconds) == 200)
        #expect(harness.sightings.isEmpty, "the station's own beacon is never a bike, even when its minor is missing")
        #expect(!harness.engine.station(now: .seconds(321)).healthy)
        #expect(EngineHarness().engine.station(now: .seconds(10_000)).configured == false)
    }
}
