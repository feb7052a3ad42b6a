import BeaconWire

/// Where each open visit sits in the engine's visit array, by beacon.
///
/// A region with a fixed major (the usual case: FindMyBike's major 1) gets a direct table of 65,536 slots
/// indexed by minor, 256 KiB: one load per advert, no hashing. A region without a major falls back to a
/// dictionary keyed by major and minor, since a table for every major would be 16 GiB.
struct VisitIndex: Sendable {
    /// Per region: the offset of its table in `dense`, or -1 for a dictionary region.
    private let denseBase: [Int]
    /// Visit position + 1, so that zero-filled memory means "no visit".
    private var dense: [UInt32]
    private var sparse: [UInt64: Int] = [:]

    init(regions: [BeaconRegion]) {
        var base: [Int] = []
        var tables = 0
        for region in regions {
            base.append(region.major == nil ? -1 : tables * 65_536)
            if region.major != nil { tables += 1 }
        }
        denseBase = base
        dense = [UInt32](repeating: 0, count: tables * 65_536)
    }

    subscript(region: Int, major: UInt16, minor: UInt16) -> Int? {
        get {
            let base = denseBase[region]
            if base >= 0 {
                let slot = dense[base &+ Int(minor)]
                return slot == 0 ? nil : Int(slot &- 1)
            }
            return sparse[Self.key(region, major, minor)]
        }
        set {
            let base = denseBase[region]
            if base >= 0 {
                dense[base &+ Int(minor)] = newValue.map { UInt32($0 + 1) } ?? 0
            } else {
                sparse[Self.key(region, major, minor)] = newValue
            }
        }
    }

    mutating func removeAll() {
        for index in dense.indices { dense[index] = 0 }
        sparse.removeAll(keepingCapacity: true)
    }

    private static func key(_ region: Int, _ major: UInt16, _ minor: UInt16) -> UInt64 {
        UInt64(region) << 32 | UInt64(major) << 16 | UInt64(minor)
    }
}
