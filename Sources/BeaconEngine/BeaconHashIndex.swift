/// Where each record naming a major sits in `MissingBikeSet.records`, by (region, major, minor): open addressing
/// over record positions, 4 bytes a slot at most three quarters full, behind a one-bit-per-key filter of eight bits
/// per record (a bloom filter with one hash).
///
/// A region that names no major keeps its bitmap by minor alone, so a list whose beacons use many majors (a rotating
/// beacon's identities use them all: 170,000 identities set nine minors in ten) makes nearly every advert there a
/// lookup. A binary search over that many records costs some 18 dependent loads an advert; the table costs two
/// (its slot and the record), and the filter, 256 KiB for 170,000 identities and one bit in twelve set, answers
/// most beacons that are not there with one.
struct BeaconHashIndex: Sendable {
    /// Record position + 1; 0 is an empty slot.
    private let slots: [UInt32]
    private let mask: Int
    /// Bit `hash >> filterShift` is set for every key in the table.
    private let filter: [UInt64]
    private let filterShift: UInt64

    static let empty = BeaconHashIndex(slots: [], mask: 0, filter: [], filterShift: 63)

    private init(slots: [UInt32], mask: Int, filter: [UInt64], filterShift: UInt64) {
        self.slots = slots
        self.mask = mask
        self.filter = filter
        self.filterShift = filterShift
    }

    /// Indexes every record for which `include` is true (records are unique by region, major and minor).
    init(records: [MissingBikeSet.Stored], include: (MissingBikeSet.Stored) -> Bool) {
        let count = records.reduce(0) { $0 + (include($1) ? 1 : 0) }
        guard count > 0 else {
            self = .empty
            return
        }
        var capacity = 16
        while capacity * 3 < count * 4 { capacity *= 2 }
        var filterBits: UInt64 = 12
        while 1 << filterBits < count * 8 { filterBits += 1 }
        var slots = [UInt32](repeating: 0, count: capacity)
        var filter = [UInt64](repeating: 0, count: 1 << (filterBits - 6))
        let mask = capacity - 1
        for (position, record) in records.enumerated() where include(record) {
            let mixed = Self.mix(region: Int(record.region), major: record.major, minor: record.minor)
            let bit = Int(truncatingIfNeeded: mixed >> (64 - filterBits))
            filter[bit >> 6] |= 1 << UInt64(bit & 63)
            var slot = Int(truncatingIfNeeded: mixed >> 32) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = UInt32(position + 1)
        }
        self.init(slots: slots, mask: mask, filter: filter, filterShift: 64 - filterBits)
    }

    var isEmpty: Bool { slots.isEmpty }

    /// The position of the record naming `major` and `minor` in `region`, if there is one.
    @inline(__always)
    func position(region: Int, major: UInt16, minor: UInt16, in records: [MissingBikeSet.Stored]) -> Int? {
        guard !slots.isEmpty else { return nil }
        let mixed = Self.mix(region: region, major: major, minor: minor)
        let bit = Int(truncatingIfNeeded: mixed >> filterShift)
        guard filter[bit &>> 6] & (1 &<< UInt64(bit & 63)) != 0 else { return nil }
        var slot = Int(truncatingIfNeeded: mixed >> 32) & mask
        while true {
            let entry = slots[slot]
            if entry == 0 { return nil }
            let record = records[Int(entry &- 1)]
            if record.minor == minor, record.major == major, Int(record.region) == region { return Int(entry &- 1) }
            slot = (slot &+ 1) & mask
        }
    }

    /// The key multiplied by 2^64 / φ (Fibonacci hashing): its bits spread over the product's high half, whose
    /// top bits pick the filter's bit and whose low 32 the table's slot.
    @inline(__always)
    static func mix(region: Int, major: UInt16, minor: UInt16) -> UInt64 {
        let key = UInt64(truncatingIfNeeded: region) << 32 | UInt64(major) << 16 | UInt64(minor)
        return key &* 0x9E37_79B9_7F4A_7C15
    }
}
