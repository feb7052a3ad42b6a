import BeaconEngine
import BeaconTestSupport
import BeaconWire
import Foundation
import Synchronization
import Testing

/// The registry side publishing new sets while the engine consumes adverts from the ring on another thread.
@Suite struct MissingSetSwapTests {
    @Test func setsSwappedWhileAdvertsFlow() async {
        let all = MissingBikeSet(
            list: BikeList(entries: (0...UInt16.max).map { .init(id: "bike-\($0)", minor: $0, missing: true) }),
            regions: [.findMyBike])
        let none = MissingBikeSet(regions: [.findMyBike])
        let mailbox = MissingSetMailbox(none)
        let ring = AdvertRing(capacity: 4_096)
        let total = 400_000
        let done = Atomic<Bool>(false)

        // The registry side: alternate between "everything missing" and "nothing missing" as fast as it can.
        let publisher = Thread { [mailbox] in
            var flip = false
            while !done.load(ordering: .relaxed) {
                flip.toggle()
                mailbox.publish(flip ? all : none)
            }
        }
        // The capture side: 64 beacons, round robin, 1 ms apart.
        let capture = Thread { [ring] in
            var producer = ring.makeProducer()
            for n in 0..<total {
                producer.push(EngineHarness.advert(minor: UInt16(n % 64), at: Double(n) / 1_000))
                if n % 1_000 == 0 { usleep(50) }  // let the consumer keep up most of the time
            }
        }
        publisher.start()
        capture.start()

        var engine = RangingEngine<ManualClock>(
            configuration: EngineConfiguration(), missing: none, startingAt: EngineHarness.origin)
        var consumer = ring.makeConsumer()
        var generation: UInt64 = 0
        var sightings: [Sighting] = []
        var consumed = 0
        while ring.statistics.pushed < UInt64(total) || ring.statistics.depth > 0 {
            if let update = mailbox.poll(since: generation) {
                generation = update.generation
                engine.replaceMissingSet(update.set)
            }
            consumed += consumer.drain(limit: 256) { advert in engine.observe(advert, at: advert.time, into: &sightings) }
        }
        done.store(true, ordering: .relaxed)
        engine.finish(into: &sightings)

        #expect(consumed + Int(ring.statistics.overwritten) == total)
        #expect(engine.counters.setsReplaced > 0)
        #expect(engine.counters.adverts == consumed)
        // Whatever the interleaving, each visit's reports follow the policy: an enter first, an exit only after
        // an enter, and every id unique.
        #expect(Set(sightings.map(\.id)).count == sightings.count)
        var entered = Set<UInt16>()
        for sighting in sightings {
            switch sighting.kind {
            case .enter: #expect(entered.insert(sighting.beacon.minor).inserted)
            case .update, .exit: #expect(entered.contains(sighting.beacon.minor))
            }
        }
        #expect(!sightings.isEmpty)
    }
}
