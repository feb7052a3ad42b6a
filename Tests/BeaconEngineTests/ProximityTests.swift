import BeaconEngine
import BeaconTestSupport
import Testing

@Suite(.timeLimit(.minutes(20))) struct ProximityTests {
    @Test func distanceFollowsThePathLossModel() throws {
        #expect(try #require(DistanceEstimate.metres(rssi: -59, measuredPower: -59)) == 1)
        #expect(abs(try #require(DistanceEstimate.metres(rssi: -79, measuredPower: -59)) - 10) < 1e-9)
        #expect(abs(try #require(DistanceEstimate.metres(rssi: -53, measuredPower: -59)) - 0.501) < 0.001)
    }

    @Test(arguments: [Int8(0), 5, 127, -101, -128])
    func nonsenseMeasuredPowerHasNoDistance(power: Int8) {
        #expect(DistanceEstimate.metres(rssi: -60, measuredPower: power) == nil)
    }

    @Test func nonsenseRSSIHasNoDistance() throws {
        for rssi in [Double.nan, .infinity, -.infinity, 21, -128, 127] {
            #expect(DistanceEstimate.metres(rssi: rssi, measuredPower: -59) == nil, "rssi \(rssi)")
        }
        #expect(DistanceEstimate.metres(rssi: nil, measuredPower: -59) == nil)
        // The weakest real reading with the quietest real beacon stays finite.
        let far = try #require(DistanceEstimate.metres(rssi: -127, measuredPower: -100))
        #expect(far.isFinite && far <= 1_000)
    }

    @Test func proximityBands() {
        #expect(Proximity(distance: 0.2) == .immediate)
        #expect(Proximity(distance: 0.5) == .near)
        #expect(Proximity(distance: 2.99) == .near)
        #expect(Proximity(distance: 3) == .far)
        #expect(Proximity(distance: nil) == .unknown)
    }

    @Test func filterSettlesOnTheMeanAndTrustsNewReadingsAfterAGap() {
        var filter = RSSIFilter(first: -70)
        var generator = SeededRandom(state: 7)
        for _ in 0..<200 {
            filter.update(Int8(-60 + Int(generator.next() % 9) - 4), elapsedSeconds: 1)
        }
        #expect(abs(filter.estimate - -60) < 1.5)
        // One wild reading moves a settled filter only a little…
        var settled = filter
        settled.update(-90, elapsedSeconds: 1)
        #expect(settled.estimate > -66)
        // …but after a long silence the same reading counts for much more.
        var afterGap = filter
        afterGap.update(-90, elapsedSeconds: 300)
        #expect(afterGap.estimate < settled.estimate - 10)
    }
}
