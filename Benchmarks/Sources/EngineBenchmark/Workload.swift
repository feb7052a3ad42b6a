import BeaconEngine
import BeaconWire

/// Synthetic adverts for the engine: minors of the FindMyBike region in turn, 10 µs apart. With all 65,536
/// minors, each beacon is heard every 0.66 s and all of them stay in range: the worst case, 65,536 open visits
/// and every advert a missing bike, with the visit table far larger than the CPU caches. With a few hundred,
/// it is a busy café.
enum Workload {
    static let origin: Int64 = 1_717_228_800_000_000_000

    /// Advert number `n` from `beacons` beacons heard in turn (minors 0 to beacons - 1).
    @inline(__always)
    static func advert(_ n: Int, beacons: Int = 65_536) -> BeaconAdvert {
        BeaconAdvert(
            time: CaptureTime(nanosecondsSinceEpoch: origin + Int64(n) * 10_000),
            beacon: IBeacon(
                uuid: BeaconRegion.findMyBike.uuid, major: 1, minor: UInt16(truncatingIfNeeded: n % beacons),
                measuredPower: -59),
            rssi: Int8(truncatingIfNeeded: -60 - n % 13), adapter: 0)
    }

    static let allMissing: MissingBikeSet = MissingBikeSet(
        list: BikeList(entries: (0...UInt16.max).map { .init(id: "bike-\($0)", minor: $0, missing: true) }),
        regions: [.findMyBike])
}
