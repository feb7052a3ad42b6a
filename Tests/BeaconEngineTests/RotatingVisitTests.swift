import BeaconEngine
import BeaconTestSupport
import BeaconWire
import Testing

/// A rotating beacon's bike is one visit however often it changes identity: one enter, updates, one exit, each
/// sighting naming the bike and carrying the identity heard last.
@Suite(.timeLimit(.minutes(20))) struct RotatingVisitTests {
    static let region = BeaconRegion(uuid: BeaconRegion.findMyBike.uuid)
    static let configuration = EngineConfiguration(stationID: "test", regions: [region])
    /// Three epochs' identities of one bike.
    static let identities: [(major: UInt16, minor: UInt16)] = [(0xA1B2, 0x0101), (0x0C3D, 0x0202), (0x4E5F, 0x0303)]

    static func set(_ identities: [(major: UInt16, minor: UInt16)], missing: Bool = true) -> MissingBikeSet {
        MissingBikeSet(
            list: BikeList(entries: [
                .init(
                    id: "bike-rotating", minor: 0, missing: missing,
                    identities: identities.map { UInt32($0.major) << 16 | UInt32($0.minor) }),
                .init(id: "bike-fixed", minor: 7, missing: true, major: 1),
            ]), regions: [region])
    }

    static func engine(_ set: MissingBikeSet) -> EngineHarness {
        var harness = EngineHarness(configuration: configuration)
        harness.engine.replaceMissingSet(set)
        return harness
    }

    /// Each identity in turn for `span` seconds, an advert a second, from 0.
    static func rotate(_ harness: inout EngineHarness, through identities: [(major: UInt16, minor: UInt16)], span: Int)
    {
        for (epoch, identity) in identities.enumerated() {
            for second in 0..<span {
                harness.hear(minor: identity.minor, at: Double(epoch * span + second), major: identity.major)
            }
        }
    }

    @Test func aBikeParkedThroughThreeRotationsIsOneVisit() {
        var harness = Self.engine(Self.set(Self.identities))
        Self.rotate(&harness, through: Self.identities, span: 400)  // 20 minutes, changing every 400 s
        harness.tick(at: 1_300)
        let kinds = harness.sightings.map(\.kind)
        #expect(kinds == [.enter, .update, .exit])
        #expect(Set(harness.sightings.map(\.bikeID)) == ["bike-rotating"])
        // Each carries the identity heard at its time: the first at 0 s, the update at 600 s (the second epoch),
        // the exit at the last advert, 1,199 s (the third).
        #expect(harness.sightings.map(\.beacon.major) == [0xA1B2, 0x0C3D, 0x4E5F])
        #expect(harness.sightings.map(\.beacon.minor) == [0x0101, 0x0202, 0x0303])
        #expect(harness.sightings.map { EngineHarness.seconds($0.lastSeen) } == [0, 600, 1_199])
        #expect(harness.sightings[2].count == 1_200, "every advert of the stay, whichever identity")
        #expect(harness.sightings.allSatisfy { EngineHarness.seconds($0.firstSeen) == 0 }, "one visit, from 0 s")
    }

    @Test func theSetMovingItsWindowKeepsTheVisit() {
        var harness = Self.engine(Self.set(Array(Self.identities[0...1])))
        Self.rotate(&harness, through: Array(Self.identities[0...1]), span: 100)
        // The registry's window moved on: the first identity is gone from the list, a later one is in it (the
        // present one, heard last, stays).
        harness.engine.replaceMissingSet(Self.set(Array(Self.identities[1...2])))
        for second in 200..<300 { harness.hear(minor: 0x0303, at: Double(second), major: 0x4E5F) }
        harness.tick(at: 400)
        #expect(harness.sightings.map(\.kind) == [.enter, .exit])
        #expect(harness.sightings.last?.beacon.minor == 0x0303)
        #expect(harness.sightings.last?.count == 300)
    }

    @Test func aBikeNoLongerMissingSaysNothingMore() {
        var harness = Self.engine(Self.set(Self.identities))
        Self.rotate(&harness, through: [Self.identities[0]], span: 10)
        harness.engine.replaceMissingSet(Self.set(Self.identities, missing: false))
        for second in 10..<20 { harness.hear(minor: 0x0202, at: Double(second), major: 0x0C3D) }
        harness.tick(at: 100)
        #expect(harness.sightings.map(\.kind) == [.enter])
    }

    @Test func fixedBeaconsBesideItAreTheirOwnVisits() {
        var harness = Self.engine(Self.set(Self.identities))
        harness.hear(minor: 7, at: 0, major: 1)
        harness.hear(minor: 0x0101, at: 0.5, major: 0xA1B2)
        harness.hear(minor: 0x0202, at: 1, major: 0x0C3D)
        harness.hear(minor: 7, at: 1.5, major: 1)
        let finished = harness.finish()
        #expect(harness.sightings.map(\.bikeID) == ["bike-fixed", "bike-rotating", "bike-fixed", "bike-rotating"])
        #expect(finished.map(\.kind) == [.exit, .exit])
        #expect(finished.first { $0.bikeID == "bike-fixed" }?.count == 2)
        #expect(finished.first { $0.bikeID == "bike-rotating" }?.count == 2)
        #expect(harness.engine.openVisits == 0)
    }
}
