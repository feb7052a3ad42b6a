import BeaconEngine
import BeaconTestSupport
import BeaconWire
import Foundation
import Synchronization
import Testing

/// The registry side publishing new sets while the engine consumes adverts from the ring on another thread.
@Suite(.timeLimit(.minutes(20))) struct MissingSetSwapTests {
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

        var engine = RangingEngine<CaptureTime>(
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
            consumed += consumer.drain(limit: 256) { advert in engine.observe(advert, at: advert.time, into: &sightings)
            }
        }
        done.store(true, ordering: .relaxed)
        engine.finish(into: &sightings)

        #expect(consumed + Int(ring.statistics.overwritten) == total)
        #expect(engine.counters.setsReplaced > 0)
        #expect(engine.counters.adverts == consumed)
        // Whatever the interleaving, each visit's reports follow the policy: an enter first, then updates, at most
        // one exit and nothing after it, and every id unique. A visit is a beacon and the time it was first heard:
        // a consumer descheduled on a busy machine lets the producer lap the ring by more than the 30 s exit
        // timeout of advert time, so a beacon may leave (with an exit, or silently if the set had withdrawn it)
        // and come back as a new visit with an enter of its own.
        #expect(Set(sightings.map(\.id)).count == sightings.count)
        struct Visit: Hashable { var minor: UInt16, firstSeen: CaptureTime }
        var open = Set<Visit>()
        var closed = Set<Visit>()
        for sighting in sightings {
            let visit = Visit(minor: sighting.beacon.minor, firstSeen: sighting.firstSeen)
            switch sighting.kind {
            case .enter:
                #expect(!open.contains(visit) && !closed.contains(visit), "a second enter for \(visit)")
                open.insert(visit)
            case .update: #expect(open.contains(visit), "an update for \(visit) outside its visit")
            case .exit: #expect(open.remove(visit) != nil && closed.insert(visit).inserted, "a stray exit for \(visit)")
            }
        }
        #expect(!sightings.isEmpty)
    }
}
