public import BeaconWire

/// The bikes reported missing, per configured region: a 65,536-bit bitmap per region for the per-advert test,
/// and the bike records for the rare moment a sighting names one.
///
/// Immutable: a new registry answer builds a new set, which replaces the old one whole (see `MissingSetMailbox`),
/// so the engine never sees half a list. Every minor of every region can be missing at once.
public final class MissingBikeSet: Sendable {
    public let regions: [BeaconRegion]
    public let statistics: Statistics
    /// Bit `minor` of region `r` is word `r * 1024 + minor / 64`.
    @usableFromInline let bitmap: [UInt64]
    /// Per region: true when a set bit alone means "missing" (every record there matches any major the region
    /// admits), false when a record names a major that must be checked too.
    @usableFromInline let bitmapIsExact: [Bool]
    /// Sorted by region, minor, then major (nil first), for binary search.
    let records: [(region: Int, record: BikeRecord)]

    @usableFromInline static let wordsPerRegion = 65_536 / 64

    public struct Statistics: Hashable, Sendable {
        /// Bikes in the set.
        public var missing = 0
        /// Entries that are valid but not missing.
        public var notMissing = 0
        /// Entries skipped as malformed, by reason (see `BikeList.Rejection`).
        public var rejected: [BikeList.Rejection: Int] = [:]
        /// Missing bikes whose beacon is in none of the configured regions.
        public var outsideRegions = 0
        /// Missing bikes whose beacon another entry already claimed (the first one is kept).
        public var duplicates = 0

        public var rejectedTotal: Int { rejected.values.reduce(0, +) }
    }

    /// An empty set: nothing is missing (yet).
    public convenience init(regions: [BeaconRegion]) {
        self.init(list: BikeList(entries: []), regions: regions)
    }

    /// Places each missing bike of `list` in the first region its beacon belongs to. An entry without a
    /// `beaconUUID` belongs to the first region (the registry's own); without a `beaconMajor`, it takes the
    /// region's major, or matches any major when the region has none.
    public init(list: BikeList, regions: [BeaconRegion]) {
        self.regions = regions
        var statistics = Statistics()
        statistics.rejected = list.rejected
        var placed: [(region: Int, record: BikeRecord, position: Int)] = []
        for entry in list.entries {
            guard entry.missing else {
                statistics.notMissing += 1
                continue
            }
            var uuid = regions.first?.uuid
            if let text = entry.uuid {
                guard let parsed = BeaconUUID(text) else {
                    statistics.rejected[.badUUID, default: 0] += 1
                    continue
                }
                uuid = parsed
            }
            guard let uuid,
                let region = regions.firstIndex(where: {
                    $0.uuid == uuid && ($0.major == nil || entry.major == nil || $0.major == entry.major)
                })
            else {
                statistics.outsideRegions += 1
                continue
            }
            let major = entry.major ?? regions[region].major
            let record = BikeRecord(
                id: entry.id, major: major, minor: entry.minor, make: entry.make, model: entry.model, colour: entry.colour)
            placed.append((region, record, placed.count))
        }
        // Ties are broken by list position, so of two entries for one beacon the registry's first is kept.
        func key(_ item: (region: Int, record: BikeRecord, position: Int)) -> (Int, Int, Int, Int) {
            (item.region, Int(item.record.minor), item.record.major.map { Int($0) } ?? -1, item.position)
        }
        placed.sort { key($0) < key($1) }
        var records: [(region: Int, record: BikeRecord)] = []
        records.reserveCapacity(placed.count)
        for item in placed {
            if let last = records.last, last.region == item.region, last.record.minor == item.record.minor,
                last.record.major == item.record.major
            {
                statistics.duplicates += 1
                continue
            }
            records.append((item.region, item.record))
        }
        var bitmap = [UInt64](repeating: 0, count: regions.count * Self.wordsPerRegion)
        var exact = [Bool](repeating: true, count: regions.count)
        for (region, record) in records {
            bitmap[region * Self.wordsPerRegion + Int(record.minor >> 6)] |= 1 << UInt64(record.minor & 63)
            if regions[region].major == nil, record.major != nil { exact[region] = false }
        }
        statistics.missing = records.count
        self.bitmap = bitmap
        self.bitmapIsExact = exact
        self.records = records
        self.statistics = statistics
    }

    public var count: Int { records.count }

    /// Is the beacon (`major`, `minor`) in region number `region` a missing bike? O(1) in the common case.
    @inlinable
    public func contains(region: Int, major: UInt16, minor: UInt16) -> Bool {
        let word = bitmap[region &* Self.wordsPerRegion &+ Int(minor &>> 6)]
        guard word & (1 &<< UInt64(minor & 63)) != 0 else { return false }
        return bitmapIsExact[region] || record(region: region, major: major, minor: minor) != nil
    }

    /// The missing bike with this beacon, if any: a record naming `major` wins over one that matches any major.
    public func record(region: Int, major: UInt16, minor: UInt16) -> BikeRecord? {
        var low = 0
        var high = records.count
        while low < high {
            let middle = (low + high) / 2
            let item = records[middle]
            if item.region < region || (item.region == region && item.record.minor < minor) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        var match: BikeRecord?
        while low < records.count, records[low].region == region, records[low].record.minor == minor {
            let record = records[low].record
            if record.major == major { return record }
            if record.major == nil { match = record }
            low += 1
        }
        return match
    }

    /// Every missing bike, in region and minor order.
    public var bikes: [BikeRecord] { records.map(\.record) }
}
