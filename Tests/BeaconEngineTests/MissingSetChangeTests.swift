import BeaconEngine
import BeaconTestSupport
import BeaconWire
import Testing

/// What the engine does when the registry's list changes under a visit, and at full scale.
@Suite(.timeLimit(.minutes(20))) struct MissingSetChangeTests {
    static func set(_ minors: [UInt16], regions: [BeaconRegion] = [.findMyBike]) -> MissingBikeSet {
        MissingBikeSet(
            list: BikeList(entries: minors.map { .init(id: "bike-\($0)", minor: $0, missing: true) }), regions: regions)
    }

    @Test func aBikeReportedMissingMidVisitGetsItsEnterAtTheNextAdvert() {
        var harness = EngineHarness(missingMinors: [])
        harness.hear(minor: 7, every: 1, from: 0, until: 100)
        #expect(harness.sightings.isEmpty)
        harness.engine.replaceMissingSet(Self.set([7]))
        let enter = harness.hear(minor: 7, at: 100)
        #expect(enter.map(\.kind) == [.enter])
        #expect(EngineHarness.seconds(enter[0].firstSeen) == 0, "the visit began before the bike went missing")
        #expect(enter[0].count == 101)
        #expect(harness.engine.counters.setsReplaced == 1)
    }

    @Test func aBikeFoundMidVisitGetsNothingMoreNotEvenAnExit() {
        var harness = EngineHarness(missingMinors: [7])
        harness.hear(minor: 7, every: 1, from: 0, until: 100)
        harness.engine.replaceMissingSet(Self.set([]))
        harness.hear(minor: 7, every: 1, from: 100, until: 800)
        harness.finish()
        #expect(harness.sightings.map(\.kind) == [.enter])
    }

    @Test func missingAgainInTheSameVisitResumesWithAnUpdateNotASecondEnter() {
        var harness = EngineHarness(missingMinors: [7])
        harness.hear(minor: 7, every: 1, from: 0, until: 10)
        harness.engine.replaceMissingSet(Self.set([]))
        harness.hear(minor: 7, every: 1, from: 10, until: 20)
        harness.engine.replaceMissingSet(Self.set([7]))
        harness.hear(minor: 7, at: 20)
        harness.finish()
        #expect(harness.sightings.map(\.kind) == [.enter, .update, .exit])
        #expect(Set(harness.sightings.map(\.id)).count == 3)
    }

    @Test func anExitNamesTheBikeEvenIfTheSetChangedSinceItsLastAdvert() {
        var harness = EngineHarness(missingMinors: [7])
        harness.hear(minor: 7, at: 0)
        harness.engine.replaceMissingSet(Self.set([8]))
        let exit = harness.tick(at: 40)
        #expect(exit.map(\.kind) == [.exit])
        #expect(exit.first?.bikeID == "bike-7")
    }

    @Test func allSixtyFiveThousandFiveHundredThirtySixMinorsCanBeMissing() {
        let all = (0...UInt16.max).map { $0 }
        var harness = EngineHarness(missingMinors: all)
        #expect(harness.engine.missing.count == 65_536)
        for minor in all { harness.hear(minor: minor, at: Double(minor) / 10_000) }
        #expect(harness.sightings.count == 65_536)
        #expect(Set(harness.sightings.map(\.bikeID)).count == 65_536)
        #expect(harness.engine.openVisits == 65_536)
        let exits = harness.tick(at: 100)
        #expect(exits.count == 65_536)
        #expect(harness.engine.openVisits == 0)
    }

    @Test func nonsenseMeasuredPowerGivesUnknownNeverInfinity() {
        for power: Int8 in [0, 1, 20, 127, -101, -128] {
            var harness = EngineHarness(missingMinors: [7])
            let enter = harness.hear(minor: 7, at: 0, power: power)
            #expect(enter.first?.proximity == .unknown, "power \(power)")
            #expect(enter.first?.distance == nil, "power \(power)")
        }
        var harness = EngineHarness(missingMinors: [7])
        let noRSSI = harness.hear(minor: 7, at: 0, rssi: nil)
        #expect(noRSSI.first?.proximity == .unknown && noRSSI.first?.rssi == nil && noRSSI.first?.rssiMax == nil)
    }
}
