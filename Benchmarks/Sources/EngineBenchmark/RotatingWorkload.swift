import BeaconEngine
import BeaconWire

/// Issue 41's comparison: the engine's cost per advert with 10,000 missing bikes as rotating beacons (17 identities
/// each, ±2 h at 15 minutes: 170,000 identities) against the same bikes as 10,000 fixed beacons, on the same
/// adverts in the same region (FindMyBike's UUID with no major, as rotating identities need).
///
/// The adverts come from 4,096 beacons heard in turn, 10 µs apart: 256 missing bikes (a fixed beacon, or a rotating
/// beacon's present identity) and 3,840 beacons that are not missing, the same in both runs. Identities are drawn
/// from a seeded generator, so every run measures the same sets.
struct RotatingWorkload: Sendable {
    static let region = BeaconRegion(uuid: BeaconRegion.findMyBike.uuid)
    static let bikes = 10_000
    static let identitiesPerBike = 17
    static let heardMissing = 256
    static let heard = 4_096

    let fixed: MissingBikeSet
    let rotating: MissingBikeSet
    /// The beacons heard, in turn, as `major << 16 | minor`: for the fixed set's run, and for the rotating set's.
    let heardWithFixed: [UInt32]
    let heardWithRotating: [UInt32]

    init() {
        var random = SplitMix(state: 41)
        func identity() -> UInt32 { UInt32(truncatingIfNeeded: random.next()) }
        var fixedEntries: [BikeList.Entry] = []
        var rotatingEntries: [BikeList.Entry] = []
        var fixedIdentities: [UInt32] = []
        var presentIdentities: [UInt32] = []
        for bike in 0..<Self.bikes {
            let own = identity()
            fixedIdentities.append(own)
            fixedEntries.append(
                .init(id: "bike-\(bike)", minor: UInt16(own & 0xFFFF), missing: true, major: UInt16(own >> 16)))
            let window = (0..<Self.identitiesPerBike).map { _ in identity() }
            presentIdentities.append(window[Self.identitiesPerBike / 2])
            rotatingEntries.append(.init(id: "bike-\(bike)", minor: 0, missing: true, identities: window))
        }
        fixed = MissingBikeSet(list: BikeList(entries: fixedEntries), regions: [Self.region])
        rotating = MissingBikeSet(list: BikeList(entries: rotatingEntries), regions: [Self.region])
        let others = (0..<(Self.heard - Self.heardMissing)).map { _ in identity() }
        heardWithFixed = Array(fixedIdentities.prefix(Self.heardMissing)) + others
        heardWithRotating = Array(presentIdentities.prefix(Self.heardMissing)) + others
    }

    @inline(__always)
    static func advert(_ n: Int, from heard: [UInt32]) -> BeaconAdvert {
        let identity = heard[n & (Self.heard - 1)]
        return BeaconAdvert(
            time: CaptureTime(nanosecondsSinceEpoch: Workload.origin + Int64(n) * 10_000),
            beacon: IBeacon(
                uuid: region.uuid, major: UInt16(truncatingIfNeeded: identity >> 16),
                minor: UInt16(truncatingIfNeeded: identity), measuredPower: -59),
            rssi: Int8(truncatingIfNeeded: -60 - n % 13), adapter: 0)
    }
}

/// SplitMix64, for the workload's identities.
struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Bench {
    /// Adverts straight into the engine with `set`, from `heard`: seconds, allocations after the warm-up (the
    /// first quarter, which opens every visit), and the sightings made.
    func engine(with set: MissingBikeSet, heard: [UInt32]) -> (seconds: Double, allocations: UInt64, sightings: Int) {
        var engine = RangingEngine<CaptureTime>(
            configuration: EngineConfiguration(stationID: "bench", regions: [RotatingWorkload.region]), missing: set,
            startingAt: CaptureTime(nanosecondsSinceEpoch: Workload.origin))
        var sightings: [Sighting] = []
        sightings.reserveCapacity(4_096)
        let warmUp = adverts / 4
        for n in 0..<warmUp {
            let advert = RotatingWorkload.advert(n, from: heard)
            engine.observe(advert, at: advert.time, into: &sightings)
        }
        let made = sightings.count
        sightings.removeAll(keepingCapacity: true)
        let before = allocations()
        let time = seconds {
            for n in warmUp..<adverts {
                let advert = RotatingWorkload.advert(n, from: heard)
                engine.observe(advert, at: advert.time, into: &sightings)
            }
        }
        return (time, allocations() - before, made + sightings.count)
    }
}
