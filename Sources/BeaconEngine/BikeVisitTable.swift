/// The open visits of rotating beacons' bikes, in slots: each identity's visit keeps its bike's slot, so an advert
/// finds the bike's visit with one load and a comparison of ids, not a hash of the id (`EngineCore`).
///
/// A slot is reused once its visit has closed; an identity visit holding a slot whose id is not its bike's finds
/// its bike again by id. Pure state, no clock: the engine says when.
struct BikeVisitTable: Sendable {
    private var slots: [BikeVisit?] = []
    private var free: [Int] = []
    private var byID: [String: Int] = [:]

    var isEmpty: Bool { byID.isEmpty }

    /// The slot of `bikeID`'s visit: `cached` if it still holds that bike's, else by id (nil when none is open).
    @inline(__always)
    func slot(of bikeID: String, cached: Int32) -> Int? {
        let slot = Int(cached)
        if slot >= 0, slot < slots.count, slots[slot]?.bikeID == bikeID { return slot }
        return byID[bikeID]
    }

    subscript(slot: Int) -> BikeVisit {
        get { slots[slot]! }
        _modify { yield &slots[slot]! }
    }

    /// Opens a visit; its slot.
    mutating func open(_ visit: BikeVisit) -> Int {
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            slots[slot] = visit
        } else {
            slot = slots.count
            slots.append(visit)
        }
        byID[visit.bikeID] = slot
        return slot
    }

    /// Closes and returns the visits for which `left` is true (none allocated when none has).
    mutating func close(where left: (BikeVisit) -> Bool) -> [BikeVisit] {
        var gone: [BikeVisit] = []
        for slot in slots.indices {
            guard let visit = slots[slot], left(visit) else { continue }
            gone.append(visit)
            slots[slot] = nil
            free.append(slot)
            byID[visit.bikeID] = nil
        }
        return gone
    }

    /// Applies `change` to every open visit.
    mutating func updateEach(_ change: (inout BikeVisit) -> Void) {
        for slot in slots.indices where slots[slot] != nil { change(&slots[slot]!) }
    }
}
