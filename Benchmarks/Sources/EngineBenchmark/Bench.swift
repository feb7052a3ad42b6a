import BeaconCapture
import BeaconEngine
import BeaconWire
import Foundation

/// The measurements, each over `adverts` adverts.
struct Bench: Sendable {
    let adverts: Int
    let capturePath: String

    // ---------------------------------------------------------------- the ring, one thread
    /// Push 64, take 64: the cost of moving an advert through each queue with no other thread involved.
    func ringSingleThread() -> Double {
        let ring = AdvertRing(capacity: 4_096)
        var producer = ring.makeProducer()
        var consumer = ring.makeConsumer()
        var checksum = 0
        let time = seconds {
            var n = 0
            while n < adverts {
                for k in 0..<64 { producer.push(Workload.advert(n + k)) }
                _ = consumer.drain { checksum &+= Int($0.beacon.minor) }
                n += 64
            }
        }
        if checksum == 42 { print("") }  // keeps the loop's work observable
        return time
    }

    func dequeSingleThread() -> Double {
        let queue = MutexDeque(capacity: 4_096)
        var checksum = 0
        let time = seconds {
            var n = 0
            while n < adverts {
                for k in 0..<64 { queue.push(Workload.advert(n + k)) }
                while let advert = queue.pop() { checksum &+= Int(advert.beacon.minor) }
                n += 64
            }
        }
        if checksum == 42 { print("") }
        return time
    }

    // ---------------------------------------------------------------- the ring, two threads
    /// A producer thread pushing flat out while this thread drains: seconds until everything was taken or
    /// counted lost, and how many were lost.
    func ringTwoThreads() -> (Double, lost: UInt64) {
        let ring = AdvertRing(capacity: 4_096)
        var consumer = ring.makeConsumer()
        let total = UInt64(adverts)
        let time = seconds {
            let thread = Thread { [ring, adverts] in
                var producer = ring.makeProducer()
                for n in 0..<adverts { producer.push(Workload.advert(n)) }
            }
            thread.start()
            while ring.statistics.consumed < total { _ = consumer.drain { _ in } }
        }
        return (time, ring.statistics.overwritten)
    }

    func dequeTwoThreads() -> (Double, lost: UInt64) {
        let queue = MutexDeque(capacity: 4_096)
        let done = ManagedAtomicFlag()
        var taken = 0
        var buffer: [BeaconAdvert] = []
        buffer.reserveCapacity(4_096)
        let time = seconds {
            let thread = Thread { [queue, adverts] in
                for n in 0..<adverts { queue.push(Workload.advert(n)) }
                done.set()
            }
            thread.start()
            while true {
                let finished = done.isSet
                queue.drain(into: &buffer)
                taken += buffer.count
                buffer.removeAll(keepingCapacity: true)
                if finished { break }
            }
        }
        let lost = queue.dropped
        if UInt64(taken) + lost != UInt64(adverts) { fail("deque lost track: \(taken) + \(lost) != \(adverts)") }
        return (time, lost)
    }

    // ---------------------------------------------------------------- the engine
    func generateOnly() -> Double {
        var checksum = 0
        let time = seconds { for n in 0..<adverts { checksum &+= Int(Workload.advert(n).beacon.minor) } }
        if checksum == 42 { print("") }
        return time
    }

    struct EngineRun {
        var seconds: Double
        var steadyAllocations: UInt64
        var residentAfterWarmUp: Int
        var residentAtEnd: Int
        var counters: EngineCounters
    }

    /// Adverts through ring + engine on one thread (push 256, drain 256), as the daemon's engine loop will.
    /// The first million adverts warm up (every visit opened, every enter sighted); allocations and memory are
    /// measured after that.
    func ringAndEngine(throughRing: Bool, beacons: Int = 65_536) -> EngineRun {
        let ring = AdvertRing(capacity: 4_096)
        var producer = ring.makeProducer()
        var consumer = ring.makeConsumer()
        var engine = RangingEngine<CaptureTime>(
            configuration: EngineConfiguration(stationID: "bench"), missing: Workload.allMissing,
            startingAt: CaptureTime(nanosecondsSinceEpoch: Workload.origin))
        var sightings: [Sighting] = []
        sightings.reserveCapacity(70_000)
        let warmUp = min(1_000_000, adverts / 2)
        var steadyAllocations: UInt64 = 0
        var residentAfterWarmUp = 0
        let time = seconds {
            var n = 0
            var allocationsAtWarmUp: UInt64 = 0
            var warmedUp = false
            while n < adverts {
                if n >= warmUp, !warmedUp {
                    warmedUp = true
                    sightings.removeAll(keepingCapacity: true)
                    residentAfterWarmUp = residentBytes()
                    allocationsAtWarmUp = allocations()
                }
                if throughRing {
                    for k in 0..<256 { producer.push(Workload.advert(n + k, beacons: beacons)) }
                    _ = consumer.drain { engine.observe($0, at: $0.time, into: &sightings) }
                } else {
                    for k in 0..<256 {
                        let advert = Workload.advert(n + k, beacons: beacons)
                        engine.observe(advert, at: advert.time, into: &sightings)
                    }
                }
                n += 256
            }
            steadyAllocations = allocations() - allocationsAtWarmUp
        }
        return EngineRun(
            seconds: time, steadyAllocations: steadyAllocations, residentAfterWarmUp: residentAfterWarmUp,
            residentAtEnd: residentBytes(), counters: engine.counters)
    }

    /// The decoder's own cost per report on the decode benchmark's capture: the yardstick the issue sets.
    func decodeCapture() throws -> (Double, reports: UInt64) {
        var reports: UInt64 = 0
        var iBeacons = 0
        let time = try seconds {
            let file = try CaptureFile(path: capturePath)
            var decoder = AdvertDecoder()
            try file.forEachRecord { record, _ in decoder.decode(record) { if $0.beacon != nil { iBeacons += 1 } } }
            reports = decoder.counters.advertisingReports
        }
        return (time, reports)
    }

}

