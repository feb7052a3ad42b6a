import BeaconEngine
import BeaconTestSupport
import BeaconWire
import Foundation
import Testing

@Suite(.timeLimit(.minutes(20))) struct AdvertRingTests {
    /// An advert whose every field is derived from `n`, so a torn or misplaced entry cannot pass as another.
    static func advert(_ n: UInt64) -> BeaconAdvert {
        BeaconAdvert(
            time: CaptureTime(nanosecondsSinceEpoch: Int64(n)),
            beacon: IBeacon(
                uuid: BeaconUUID(rawValue: UInt128(n) << 64 | UInt128(~n)), major: UInt16(truncatingIfNeeded: n >> 16),
                minor: UInt16(truncatingIfNeeded: n), measuredPower: Int8(truncatingIfNeeded: n % 100) - 100),
            rssi: n % 7 == 0 ? nil : Int8(truncatingIfNeeded: n % 90) - 100,
            adapter: n % 5 == 0 ? nil : UInt16(truncatingIfNeeded: n % 3))
    }

    @Test func entriesComeOutAsTheyWentIn() {
        let ring = AdvertRing(capacity: 8)
        var producer = ring.makeProducer()
        var consumer = ring.makeConsumer()
        #expect(consumer.pop() == nil)
        for round in 0..<10 {  // wraps around the slots several times
            for n in 0..<5 { producer.push(Self.advert(UInt64(round * 5 + n))) }
            for n in 0..<5 { #expect(consumer.pop() == Self.advert(UInt64(round * 5 + n))) }
            #expect(consumer.pop() == nil)
        }
        #expect(ring.statistics == .init(pushed: 50, consumed: 50, overwritten: 0))
    }

    @Test func absentRSSIAndAdapterSurviveTheRing() {
        let ring = AdvertRing(capacity: 2)
        var producer = ring.makeProducer()
        var consumer = ring.makeConsumer()
        let advert = BeaconAdvert(
            time: CaptureTime(nanosecondsSinceEpoch: -5),
            beacon: IBeacon(uuid: BeaconUUID(rawValue: .max), major: .max, minor: 0, measuredPower: -128),
            rssi: nil, adapter: nil)
        producer.push(advert)
        #expect(consumer.pop() == advert)
    }

    @Test func whenFullTheOldestAreDroppedAndCounted() {
        let ring = AdvertRing(capacity: 5)  // rounded up to 8
        #expect(ring.capacity == 8)
        var producer = ring.makeProducer()
        var consumer = ring.makeConsumer()
        for n in 0..<20 { producer.push(Self.advert(UInt64(n))) }
        var seen: [BeaconAdvert] = []
        _ = consumer.drain { seen.append($0) }
        #expect(seen == (12..<20).map { Self.advert(UInt64($0)) }, "the newest 8 survive")
        #expect(ring.statistics == .init(pushed: 20, consumed: 20, overwritten: 12))
        #expect(ring.statistics.depth == 0)
    }

    @Test func drainStopsAtItsLimit() {
        let ring = AdvertRing(capacity: 16)
        var producer = ring.makeProducer()
        var consumer = ring.makeConsumer()
        for n in 0..<10 { producer.push(Self.advert(UInt64(n))) }
        #expect(consumer.drain(limit: 4) { _ in } == 4)
        #expect(ring.statistics.depth == 6)
        #expect(consumer.pop() == Self.advert(4))
    }

    /// A producer thread pushing flat out into a small ring while the consumer reads: every entry the consumer
    /// gets is intact and in order, and everything it did not get is counted as overwritten.
    @Test func concurrentProducerAndConsumerLoseNothingUncounted() async {
        let ring = AdvertRing(capacity: 64)
        let total: UInt64 = 2_000_000
        let producerThread = Thread { [ring] in
            var producer = ring.makeProducer()
            for n in 0..<total { producer.push(Self.advert(n)) }
        }
        producerThread.start()
        var consumer = ring.makeConsumer()
        var received: UInt64 = 0
        var last: Int64 = -1
        var intact = true
        while ring.statistics.pushed < total || ring.statistics.depth > 0 {
            _ = consumer.drain { advert in
                let n = UInt64(advert.time.nanosecondsSinceEpoch)
                if advert != Self.advert(n) || Int64(n) <= last { intact = false }
                last = Int64(n)
                received += 1
            }
        }
        let statistics = ring.statistics
        #expect(intact, "no torn or reordered entry")
        #expect(received + statistics.overwritten == total)
        #expect(statistics.pushed == total && statistics.consumed == total)
        #expect(received > 0)
    }
}
