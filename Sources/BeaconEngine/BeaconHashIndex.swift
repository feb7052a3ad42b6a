/// Where each record naming a major sits in `MissingBikeSet.records`, by (region, major, minor): open addressing
/// over record positions, 4 bytes a slot at most three quarters full.
///
/// A region that names no major keeps its bitmap by minor alone, so a list whose beacons use many majors (a rotating
/// beacon's identities use them all: 170,000 identities set nine minors in ten) makes nearly every advert there a
/// lookup. A binary search over that many records costs some 18 dependent loads an advert; this costs one or two.
struct BeaconHashIndex: Sendable {
    /// Record position + 1; 0 is an empty slot.
    private let slots: [UInt32]
    private let mask: Int

    static let empty = BeaconHashIndex(slots: [], mask: 0)

    private init(slots: [UInt32], mask: Int) {
        self.slots = slots
        self.mask = mask
    }

    /// Indexes every record for which `include` is true (records are unique by region, major and minor).
    init(records: [MissingBikeSet.Stored], include: (MissingBikeSet.Stored) -> Bool) {
        let count = records.reduce(0) { $0 + (include($1) ? 1 : 0) }
        var capacity = 16
        while capacity * 3 < count * 4 { capacity *= 2 }
        var slots = [UInt32](repeating: 0, count: count == 0 ? 0 : capacity)
        let mask = capacity - 1
        for (position, record) in records.enumerated() where include(record) {
            var slot = Self.hash(region: Int(record.region), major: record.major, minor: record.minor) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = UInt32(position + 1)
        }
        self.init(slots: slots, mask: mask)
    }

    var isEmpty: Bool { slots.isEmpty }

    /// The position of the record naming `major` and `minor` in `region`, if there is one.
    @inline(__always)
    func position(region: Int, major: UInt16, minor: UInt16, in records: [MissingBikeSet.Stored]) -> Int? {
        guard !slots.isEmpty else { return nil }
        var slot = Self.hash(region: region, major: major, minor: minor) & mask
        while true {
            let entry = slots[slot]
            if entry == 0 { return nil }
            let record = records[Int(entry &- 1)]
            if record.minor == minor, record.major == major, Int(record.region) == region { return Int(entry &- 1) }
            slot = (slot &+ 1) & mask
        }
    }

    /// A multiplicative hash (Fibonacci hashing): the key's bits spread over the high half, folded down.
    @inline(__always)
    static func hash(region: Int, major: UInt16, minor: UInt16) -> Int {
        let key = UInt64(truncatingIfNeeded: region) << 32 | UInt64(major) << 16 | UInt64(minor)
        let mixed = key &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> 32)
    }
}
