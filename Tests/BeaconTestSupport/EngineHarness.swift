public import BeaconEngine
public import BeaconWire

/// Drives a `RangingEngine` on a `TestClock` with adverts given as "minor M heard at T seconds", and keeps
/// every sighting it produced.
public struct EngineHarness {
    public var engine: RangingEngine<TestClock.Instant>
    public var sightings: [Sighting] = []
    /// Wall-clock time at instant zero: 2024-06-01T08:00:00Z.
    public static let origin = CaptureTime(nanosecondsSinceEpoch: 1_717_228_800_000_000_000)

    public init(
        configuration: EngineConfiguration = EngineConfiguration(stationID: "test"), missingMinors: [UInt16] = []
    ) {
        let list = BikeList(
            entries: missingMinors.map { .init(id: "bike-\($0)", minor: $0, missing: true) })
        engine = RangingEngine(
            configuration: configuration, missing: MissingBikeSet(list: list, regions: configuration.regions),
            startingAt: .seconds(0))
    }

    public static func advert(
        minor: UInt16, at seconds: Double, rssi: Int8? = -62, power: Int8 = -59, major: UInt16 = 1,
        uuid: BeaconUUID = BeaconRegion.findMyBike.uuid
    ) -> BeaconAdvert {
        BeaconAdvert(
            time: origin.advanced(by: .seconds(seconds)),
            beacon: IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: power), rssi: rssi, adapter: 0)
    }

    /// Hears one advert and returns the sightings it caused.
    @discardableResult
    public mutating func hear(
        minor: UInt16, at seconds: Double, rssi: Int8? = -62, power: Int8 = -59, major: UInt16 = 1,
        uuid: BeaconUUID = BeaconRegion.findMyBike.uuid
    ) -> [Sighting] {
        let before = sightings.count
        engine.observe(
            Self.advert(minor: minor, at: seconds, rssi: rssi, power: power, major: major, uuid: uuid),
            at: .seconds(seconds), into: &sightings)
        return Array(sightings[before...])
    }

    /// Hears `minor` every `interval` seconds from `start` up to (not including) `end`.
    public mutating func hear(
        minor: UInt16, every interval: Double, from start: Double, until end: Double, rssi: Int8? = -62
    ) {
        var time = start
        while time < end {
            hear(minor: minor, at: time, rssi: rssi)
            time += interval
        }
    }

    /// Lets time pass with nothing heard; returns the exits it caused.
    @discardableResult
    public mutating func tick(at seconds: Double) -> [Sighting] {
        let before = sightings.count
        engine.expire(now: .seconds(seconds), into: &sightings)
        return Array(sightings[before...])
    }

    @discardableResult
    public mutating func finish() -> [Sighting] {
        let before = sightings.count
        engine.finish(into: &sightings)
        return Array(sightings[before...])
    }

    /// Seconds since the origin of a capture time.
    public static func seconds(_ time: CaptureTime) -> Double {
        Double(time.nanosecondsSinceEpoch - origin.nanosecondsSinceEpoch) / 1e9
    }
}
