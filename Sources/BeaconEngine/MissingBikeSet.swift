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

    /// Records naming a major in regions whose bitmap is not exact, for the per-advert test there.
    let index: BeaconHashIndex
    /// Per region: whether some record there matches any major (found by binary search, not `index`).
    let hasAnyMajorRecords: [Bool]

    /// One bike, or one identity of a rotating beacon's bike, without its text (`text` is its block << 16 | its
    /// offset in the block; a rotating bike's identities share one).
    struct Stored: Sendable {
        var region: UInt16
        var minor: UInt16
        var major: UInt16
        var hasMajor: Bool
        /// One of a rotating beacon's identities: the engine keys its visit by the bike, not by the identity.
        var rotating: Bool
        var text: UInt32
    }

    public struct Statistics: Hashable, Sendable {
        /// Bikes in the set (a rotating beacon's bike once, however many of its identities).
        public var missing = 0
        /// Rotating beacons' identities in the set, all their bikes' together.
        public var identities = 0
        /// Identities a rotating beacon shares with another entry's beacon (the first entry keeps it): chance
        /// collisions of 32 bits, or a clone; not counted in `entries`.
        public var sharedIdentities = 0
        /// Entries that are valid but not missing.
        public var notMissing = 0
        /// Entries skipped as malformed, by reason (see `BikeList.Rejection`).
        public var rejected: [BikeList.Rejection: Int] = [:]
        /// Missing bikes whose beacon is in none of the configured regions.
        public var outsideRegions = 0
        /// Of those, rotating beacons' bikes: their identities use every major, so a region naming one admits few of
        /// them, and none of this bike's (`beacond doctor` says so).
        public var rotatingOutsideRegions = 0
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
        let records = Self.unique(builder.placed, statistics: &builder.statistics)
        builder.placed = []
        let regions = builder.regions
        var bitmap = [UInt64](repeating: 0, count: regions.count * Self.wordsPerRegion)
        var exact = [Bool](repeating: true, count: regions.count)
        var anyMajor = [Bool](repeating: false, count: regions.count)
        for record in records {
            bitmap[Int(record.region) * Self.wordsPerRegion + Int(record.minor >> 6)] |= 1 << UInt64(record.minor & 63)
            if regions[Int(record.region)].major == nil, record.hasMajor { exact[Int(record.region)] = false }
            if !record.hasMajor { anyMajor[Int(record.region)] = true }
        }
        self.regions = regions
        self.bitmap = bitmap
        self.bitmapIsExact = exact
        self.hasAnyMajorRecords = anyMajor
        self.index = BeaconHashIndex(records: records) { $0.hasMajor && !exact[Int($0.region)] }
        self.records = records
        self.text = builder.text
        self.statistics = builder.statistics
    }

    /// The sorted records with repeats of one beacon dropped (the first kept), counting what was dropped and what
    /// is left: bikes, and rotating beacons' identities (their bikes counted once each).
    private static func unique(_ placed: [Builder.Placed], statistics: inout Statistics) -> [Stored] {
        var records: [Stored] = []
        records.reserveCapacity(placed.count)
        for item in placed {
            if let last = records.last, last.region == item.stored.region, last.minor == item.stored.minor,
                last.hasMajor == item.stored.hasMajor, last.major == item.stored.major
            {
                if item.stored.rotating { statistics.sharedIdentities += 1 } else { statistics.duplicates += 1 }
                continue
            }
            records.append(item.stored)
        }
        var rotatingBikes = Set<UInt32>()
        var fixed = 0
        for record in records {
            if record.rotating { rotatingBikes.insert(record.text) } else { fixed += 1 }
        }
        statistics.missing = fixed + rotatingBikes.count
        statistics.identities = records.count - fixed
        return records
    }

    /// Makes a set from entries given one at a time: each missing bike goes in the first region its beacon belongs
    /// to. An entry without a `beaconUUID` belongs to the first region (the registry's own); without a
    /// `beaconMajor`, it takes the region's major, or matches any major when the region has none.
    public struct Builder: Sendable {
        let regions: [BeaconRegion]
        var statistics = Statistics()
        var placed: [Placed] = []
        var text: [[UInt8]] = []
        /// By region, the minors an entry for any major holds already (a bit a minor, made on the region's first such
        /// entry). A later entry for one of them is a repeat the set would drop (the first is kept), so it is dropped
        /// as it comes: kept until `build`, a list whose minors repeat past 65,536 held every repeat and its text
        /// (issue 59: 344,648 entries at the 16 MiB cap, 65,536 of them kept).
        var anyMajorMinors: [[UInt64]] = []

        struct Placed: Sendable {
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
            guard let uuid else {
                statistics.outsideRegions += 1
                return
            }
            if entry.isRotating {
                addRotating(entry, uuid: uuid)
                return
            }
            guard
                let region = regions.firstIndex(where: {
                    $0.uuid == uuid && ($0.major == nil || entry.major == nil || $0.major == entry.major)
                })
            else {
                statistics.outsideRegions += 1
                return
            }
            let major = entry.major ?? regions[region].major
            if major == nil, !firstForAnyMajor(region: region, minor: entry.minor) {
                statistics.duplicates += 1
                return
            }
            place(
                Stored(
                    region: UInt16(region), minor: entry.minor, major: major ?? 0, hasMajor: major != nil,
                    rotating: false, text: appendText(of: entry)))
        }

        /// Each identity in the first region that admits its major, all under one text; a bike none of whose
        /// identities any region admits is outside the regions.
        private mutating func addRotating(_ entry: BikeList.Entry, uuid: BeaconUUID) {
            var text: UInt32?
            for identity in entry.identities {
                let major = UInt16(truncatingIfNeeded: identity >> 16)
                guard let region = regions.firstIndex(where: { $0.uuid == uuid && ($0.major ?? major) == major })
                else { continue }
                let offset = text ?? appendText(of: entry)
                text = offset
                place(
                    Stored(
                        region: UInt16(region), minor: UInt16(truncatingIfNeeded: identity), major: major,
                        hasMajor: true, rotating: true, text: offset))
            }
            if text == nil {
                statistics.outsideRegions += 1
                statistics.rotatingOutsideRegions += 1
            }
        }

        /// Whether this is the first entry for any major with this minor in the region; notes it.
        private mutating func firstForAnyMajor(region: Int, minor: UInt16) -> Bool {
            if anyMajorMinors.isEmpty { anyMajorMinors = Array(repeating: [], count: regions.count) }
            if anyMajorMinors[region].isEmpty {
                anyMajorMinors[region] = Array(repeating: 0, count: MissingBikeSet.wordsPerRegion)
            }
            let (word, bit) = (Int(minor >> 6), UInt64(1) << UInt64(minor & 63))
            guard anyMajorMinors[region][word] & bit == 0 else { return false }
            anyMajorMinors[region][word] |= bit
            return true
        }

        private mutating func place(_ stored: Stored) {
            placed.append(Placed(stored: stored, position: UInt32(placed.count)))
        }

        /// The entry's id, make, model and colour appended to the text; where they start.
        private mutating func appendText(of entry: BikeList.Entry) -> UInt32 {
            let fields = [entry.id, entry.make, entry.model, entry.colour]
            let size = fields.reduce(0) { $0 + 2 + min($1?.utf8.count ?? 0, Self.fieldLimit) }
            // A record's text stays in one block (ids and descriptions are capped far below a block).
            if text.isEmpty || text[text.count - 1].count + size > MissingBikeSet.textBlock {
                text.append([])
                text[text.count - 1].reserveCapacity(MissingBikeSet.textBlock)
            }
            let offset = UInt32(text.count - 1) << 16 | UInt32(text[text.count - 1].count)
            for field in fields { Self.append(field, to: &text[text.count - 1]) }
            return offset
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

    /// Missing bikes: a rotating beacon's bike once, however many of its identities the set holds.
    public var count: Int { statistics.missing }

    /// Is the beacon (`major`, `minor`) in region number `region` a missing bike? O(1) in the common case.
    @inlinable
    public func contains(region: Int, major: UInt16, minor: UInt16) -> Bool {
        let word = bitmap[region &* Self.wordsPerRegion &+ Int(minor &>> 6)]
        guard word & (1 &<< UInt64(minor & 63)) != 0 else { return false }
        return bitmapIsExact[region] || position(region: region, major: major, minor: minor) != nil
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
        position(region: region, major: major, minor: minor).map { bike(records[$0]) }
    }

    /// Whether the beacon is one of a missing rotating beacon's identities (whose visits are its bike's).
    func isRotating(region: Int, major: UInt16, minor: UInt16) -> Bool {
        position(region: region, major: major, minor: minor).map { records[$0].rotating } ?? false
    }

    /// Where the record for this beacon is: by `index` where there is one, by binary search otherwise.
    @usableFromInline
    func position(region: Int, major: UInt16, minor: UInt16) -> Int? {
        if !bitmapIsExact[region], !index.isEmpty {
            if let found = index.position(region: region, major: major, minor: minor, in: records) { return found }
            guard hasAnyMajorRecords[region] else { return nil }
        }
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
        var match: Int?
        while low < records.count, Int(records[low].region) == region, records[low].minor == minor {
            let record = records[low]
            if record.hasMajor && record.major == major { return low }
            if !record.hasMajor { match = low }
            low += 1
        }
        return match
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
            colour: field(), isRotating: stored.rotating)
    }

    /// Every missing bike once, one at a time (the cache is written this way): fixed beacons' in region and minor
    /// order, with no identities, then each rotating beacon's bike with its identities (`major << 16 | minor`), in
    /// the region of the first.
    public func forEachBike(
        _ body: (_ region: BeaconRegion, _ bike: BikeRecord, _ identities: [UInt32]) throws -> Void
    ) rethrows {
        for stored in records where !stored.rotating { try body(regions[Int(stored.region)], bike(stored), []) }
        // Grouped by bike (its text) in one sorted array of 8-byte keys, rather than a dictionary of arrays.
        var keys: [UInt64] = []
        for (position, stored) in records.enumerated() where stored.rotating {
            keys.append(UInt64(stored.text) << 32 | UInt64(position))
        }
        keys.sort()
        var start = 0
        while start < keys.count {
            var end = start
            while end < keys.count, keys[end] >> 32 == keys[start] >> 32 { end += 1 }
            let first = records[Int(truncatingIfNeeded: keys[start] & 0xFFFF_FFFF)]
            let identities = keys[start..<end].map { key in
                let stored = records[Int(truncatingIfNeeded: key & 0xFFFF_FFFF)]
                return UInt32(stored.major) << 16 | UInt32(stored.minor)
            }
            try body(regions[Int(first.region)], bike(first), identities)
            start = end
        }
    }

    /// Every missing bike, in region and minor order.
    public var bikes: [BikeRecord] { records.map(bike) }
}
