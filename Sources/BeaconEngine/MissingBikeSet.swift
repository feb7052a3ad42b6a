public import BeaconWire

/// The bikes reported missing, per configured region: a 65,536-bit bitmap per region for the per-advert test,
/// and the bike records for the rare moment a sighting names one.
///
/// Immutable: a new registry answer builds a new set, which replaces the old one whole (see `MissingSetMailbox`),
/// so the engine never sees half a list. Every minor of every region can be missing at once, and every major of a
/// region that names none: the records are compact (12 bytes each, their text in one byte array), so a list of
/// 137,000 bikes costs about 6 MiB, and `Builder` makes the set from entries one at a time, as `BikeListReader`
/// reads them, without a list of them all.
public final class MissingBikeSet: Sendable {
    public let regions: [BeaconRegion]
    public let statistics: Statistics
    /// Bit `minor` of region `r` is word `r * 1024 + minor / 64`.
    @usableFromInline let bitmap: [UInt64]
    /// Per region: true when a set bit alone means "missing" (every record there matches any major the region
    /// admits), false when a record names a major that must be checked too.
    @usableFromInline let bitmapIsExact: [Bool]
    /// Sorted by region, minor, then major (none first), for binary search.
    let records: [Stored]
    /// Each record's id, make, model and colour, one after another, each a 2-byte length (0xFFFF: absent) and its
    /// UTF-8 bytes, in blocks of 64 KiB: one growing array would be copied at each doubling, and the copy of a large
    /// list's text, beside the text, is what a memory limit notices.
    let text: [[UInt8]]
    static let textBlock = 65_536

    @usableFromInline static let wordsPerRegion = 65_536 / 64

    /// One bike, without its text (`text` is its block << 16 | its offset in the block).
    struct Stored: Sendable {
        var region: UInt16
        var minor: UInt16
        var major: UInt16
        var hasMajor: Bool
        var text: UInt32
    }

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
        /// Every entry of the list, usable or not.
        public var entries: Int { missing + notMissing + rejectedTotal + outsideRegions + duplicates }
    }

    /// An empty set: nothing is missing (yet).
    public convenience init(regions: [BeaconRegion]) {
        self.init(list: BikeList(entries: []), regions: regions)
    }

    /// Places each missing bike of `list` in the first region its beacon belongs to (see `Builder`).
    public convenience init(list: BikeList, regions: [BeaconRegion]) {
        var builder = Builder(regions: regions)
        for (reason, count) in list.rejected { builder.statistics.rejected[reason, default: 0] += count }
        for entry in list.entries { builder.add(entry) }
        self.init(builder)
    }

    init(_ builder: consuming Builder) {
        var builder = builder
        // Ties are broken by list position, so of two entries for one beacon the registry's first is kept.
        builder.placed.sort {
            ($0.stored.region, $0.stored.minor, $0.majorKey, $0.position) < (
                $1.stored.region, $1.stored.minor, $1.majorKey, $1.position
            )
        }
        var records: [Stored] = []
        records.reserveCapacity(builder.placed.count)
        for item in builder.placed {
            if let last = records.last, last.region == item.stored.region, last.minor == item.stored.minor,
                last.hasMajor == item.stored.hasMajor, last.major == item.stored.major
            {
                builder.statistics.duplicates += 1
                continue
            }
            records.append(item.stored)
        }
        builder.placed = []
        let regions = builder.regions
        var bitmap = [UInt64](repeating: 0, count: regions.count * Self.wordsPerRegion)
        var exact = [Bool](repeating: true, count: regions.count)
        for record in records {
            bitmap[Int(record.region) * Self.wordsPerRegion + Int(record.minor >> 6)] |= 1 << UInt64(record.minor & 63)
            if regions[Int(record.region)].major == nil, record.hasMajor { exact[Int(record.region)] = false }
        }
        builder.statistics.missing = records.count
        self.regions = regions
        self.bitmap = bitmap
        self.bitmapIsExact = exact
        self.records = records
        self.text = builder.text
        self.statistics = builder.statistics
    }

    /// Makes a set from entries given one at a time: each missing bike goes in the first region its beacon belongs
    /// to. An entry without a `beaconUUID` belongs to the first region (the registry's own); without a
    /// `beaconMajor`, it takes the region's major, or matches any major when the region has none.
    public struct Builder: Sendable {
        let regions: [BeaconRegion]
        var statistics = Statistics()
        fileprivate var placed: [Placed] = []
        var text: [[UInt8]] = []

        fileprivate struct Placed: Sendable {
            var stored: Stored
            var position: UInt32
            var majorKey: Int32 { stored.hasMajor ? Int32(stored.major) : -1 }
        }

        public init(regions: [BeaconRegion]) {
            precondition(regions.count <= Int(UInt16.max), "more regions than a set can index")
            self.regions = regions
        }

        /// An entry the list's reader skipped, counted by its reason.
        public mutating func reject(_ reason: BikeList.Rejection) { statistics.rejected[reason, default: 0] += 1 }

        public mutating func add(_ entry: BikeList.Entry) {
            guard entry.missing else {
                statistics.notMissing += 1
                return
            }
            var uuid = regions.first?.uuid
            if let textUUID = entry.uuid {
                guard let parsed = BeaconUUID(textUUID) else {
                    statistics.rejected[.badUUID, default: 0] += 1
                    return
                }
                uuid = parsed
            }
            guard let uuid,
                let region = regions.firstIndex(where: {
                    $0.uuid == uuid && ($0.major == nil || entry.major == nil || $0.major == entry.major)
                })
            else {
                statistics.outsideRegions += 1
                return
            }
            let major = entry.major ?? regions[region].major
            let fields = [entry.id, entry.make, entry.model, entry.colour]
            let size = fields.reduce(0) { $0 + 2 + min($1?.utf8.count ?? 0, Self.fieldLimit) }
            // A record's text stays in one block (ids and descriptions are capped far below a block).
            if text.isEmpty || text[text.count - 1].count + size > MissingBikeSet.textBlock {
                text.append([])
                text[text.count - 1].reserveCapacity(MissingBikeSet.textBlock)
            }
            let offset = UInt32(text.count - 1) << 16 | UInt32(text[text.count - 1].count)
            for field in fields { Self.append(field, to: &text[text.count - 1]) }
            placed.append(
                Placed(
                    stored: Stored(
                        region: UInt16(region), minor: entry.minor, major: major ?? 0, hasMajor: major != nil,
                        text: offset),
                    position: UInt32(placed.count)))
        }

        /// Bytes kept of one field (ids are at most 256, descriptions 100 characters: this only bounds a block).
        static let fieldLimit = 1_024

        static func append(_ field: String?, to text: inout [UInt8]) {
            guard let field else {
                text += [0xFF, 0xFF]
                return
            }
            let bytes = field.utf8.prefix(fieldLimit)
            text += [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)]
            text += bytes
        }

        public consuming func build() -> MissingBikeSet { MissingBikeSet(self) }
    }

    public var count: Int { records.count }

    /// Is the beacon (`major`, `minor`) in region number `region` a missing bike? O(1) in the common case.
    @inlinable
    public func contains(region: Int, major: UInt16, minor: UInt16) -> Bool {
        let word = bitmap[region &* Self.wordsPerRegion &+ Int(minor &>> 6)]
        guard word & (1 &<< UInt64(minor & 63)) != 0 else { return false }
        return bitmapIsExact[region] || record(region: region, major: major, minor: minor) != nil
    }

    /// The missing bike with this beacon, in whichever configured region holds it (what a sighting's reader may want
    /// besides its id: make, model, colour).
    public func record(for beacon: BeaconIdentity) -> BikeRecord? {
        guard
            let region = regions.firstIndex(where: {
                $0.uuid == beacon.uuid && ($0.major == nil || $0.major == beacon.major)
            })
        else { return nil }
        return record(region: region, major: beacon.major, minor: beacon.minor)
    }

    /// The missing bike with this beacon, if any: a record naming `major` wins over one that matches any major.
    public func record(region: Int, major: UInt16, minor: UInt16) -> BikeRecord? {
        var low = 0
        var high = records.count
        while low < high {
            let middle = (low + high) / 2
            let item = records[middle]
            if Int(item.region) < region || (Int(item.region) == region && item.minor < minor) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        var match: Stored?
        while low < records.count, Int(records[low].region) == region, records[low].minor == minor {
            let record = records[low]
            if record.hasMajor && record.major == major { return bike(record) }
            if !record.hasMajor { match = record }
            low += 1
        }
        return match.map(bike)
    }

    /// A stored record with its text, as a `BikeRecord`.
    func bike(_ stored: Stored) -> BikeRecord {
        let text = self.text[Int(stored.text >> 16)]
        var offset = Int(stored.text & 0xFFFF)
        func field() -> String? {
            let length = Int(text[offset]) << 8 | Int(text[offset + 1])
            offset += 2
            guard length != 0xFFFF else { return nil }
            defer { offset += length }
            return String(decoding: text[offset..<offset + length], as: UTF8.self)
        }
        let id = field() ?? ""
        return BikeRecord(
            id: id, major: stored.hasMajor ? stored.major : nil, minor: stored.minor, make: field(), model: field(),
            colour: field())
    }

    /// Every missing bike, in region and minor order, one at a time (the cache is written this way).
    public func forEachBike(_ body: (_ region: BeaconRegion, _ bike: BikeRecord) throws -> Void) rethrows {
        for stored in records { try body(regions[Int(stored.region)], bike(stored)) }
    }

    /// Every missing bike, in region and minor order.
    public var bikes: [BikeRecord] { records.map(bike) }
}
