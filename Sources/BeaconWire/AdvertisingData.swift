/// The outcome of walking one report's advertising data.
public struct AdvertisingDataSummary: Sendable {
    public var kind: AdvertKind = .other
    public var beacon: IBeacon? = nil
    /// An AD structure ran past the end of the data (it and everything after it were ignored).
    public var hadBadStructure = false
    /// Apple manufacturer data began `4C 00 02 15` but was not exactly 25 bytes long.
    public var hadMalformedIBeacon = false

    @inlinable public init() {}
}

/// AD structures (Core spec Vol 3, Part C, §11): `length`, `type`, `length - 1` bytes of data.
public enum AdvertisingData {
    @usableFromInline static let manufacturerSpecific: UInt8 = 0xFF
    @usableFromInline static let serviceData16: UInt8 = 0x16
    @usableFromInline static let incompleteServiceUUIDs16: UInt8 = 0x02
    @usableFromInline static let completeServiceUUIDs16: UInt8 = 0x03
    @usableFromInline static let appleCompanyID: UInt16 = 0x004C
    @usableFromInline static let eddystoneServiceUUID: UInt16 = 0xFEAA

    /// Walks the AD structures of `data` and classifies the advert.
    ///
    /// A zero length ends the data early (the spec's terminator; the kernel's and BlueZ's parsers stop there
    /// too, so a beacon behind it is not seen). A structure running past the data is dropped.
    ///
    /// This runs for every advert the radio hears, so the walk keeps its state in a few locals (the best kind's
    /// rank, where the first iBeacon's body is) and moves a raw pointer through the data: each structure's length
    /// is checked against the data's end before any of its bytes are read. The `IBeacon` is built once: at
    /// once for the canonical advert, returning there rather than falling through to the end (the canonical
    /// advert is most of what a café hears, so its path is the one kept shortest), otherwise after the walk. The
    /// walk's loops stay inline: the service-UUID loop moved to a helper that returned at the first match (issue
    /// 40's split) made the decode benchmark 10 % slower on an AMD EPYC, 1.37x the C loop against 1.24x.
    @inlinable @inline(__always)
    public static func summarize(_ data: UnsafeRawBufferPointer) -> AdvertisingDataSummary {
        var summary = AdvertisingDataSummary()
        guard let base = data.baseAddress else { return summary }
        let count = data.count
        var rank = Rank.other
        var beaconAt: UnsafeRawPointer? = nil  // the first iBeacon's body
        var malformed = false
        var bad = false
        if isCanonicalIBeacon(base, count: count) {
            summary.kind = .iBeacon
            summary.beacon = iBeacon(at: base + 5)
            return summary
        }
        let end = base + count
        var cursor = base
        // A leading flags structure (`02 01 xx`) needs no look: start after it.
        if count >= 3, UInt16(littleEndian: base.loadUnaligned(as: UInt16.self)) == flagsHeader {
            cursor = base + 3
            if isOneManufacturerStructure(base, at: 3, count: count) {
                (rank, malformed) = manufacturerRank(base + 5, bodyCount: count &- 5)
                if rank == Rank.iBeacon { beaconAt = base + 5 }
                cursor = end  // nothing left to walk
            }
        }
        while cursor < end {
            let length = Int(cursor.load(as: UInt8.self))
            let next = cursor + (1 &+ length)
            // A zero length is the terminator; a structure running past the data is bad.
            guard length != 0, next <= end else {
                bad = length != 0
                break
            }
            let type = cursor.load(fromByteOffset: 1, as: UInt8.self)
            let body = cursor + 2
            let bodyCount = length &- 1
            cursor = next
            // Manufacturer data first: of the types that matter, it is the one nearly every advert carries.
            if type == manufacturerSpecific {
                guard bodyCount >= 2 else { continue }
                if u16(body) == appleCompanyID {
                    let (found, wrongLength) = manufacturerRank(body, bodyCount: bodyCount)
                    if found == Rank.iBeacon, beaconAt == nil { beaconAt = body }
                    malformed = malformed || wrongLength
                    rank = min(rank, found)
                } else if bodyCount >= 4, u16(body + 2) == altBeaconCode {
                    rank = min(rank, Rank.altBeacon)
                }
            } else if type == serviceData16 {
                if bodyCount >= 2, u16(body) == eddystoneServiceUUID { rank = min(rank, Rank.eddystone) }
            } else if type == incompleteServiceUUIDs16 || type == completeServiceUUIDs16 {
                var uuid = body
                while uuid + 1 < next {
                    if u16(uuid) == eddystoneServiceUUID { rank = min(rank, Rank.eddystone) }
                    uuid += 2
                }
            }
        }
        return finished(rank: rank, bad: bad, malformed: malformed, beaconAt: beaconAt)
    }

    /// The walk's findings as a summary, the iBeacon built from the first one's body.
    @inlinable @inline(__always)
    static func finished(rank: UInt8, bad: Bool, malformed: Bool, beaconAt: UnsafeRawPointer?)
        -> AdvertisingDataSummary
    {
        var summary = AdvertisingDataSummary()
        summary.kind = Rank.kind(rank)
        summary.hadBadStructure = bad
        summary.hadMalformedIBeacon = malformed
        if let beaconAt { summary.beacon = iBeacon(at: beaconAt) }
        return summary
    }

    /// The iBeacon whose 25 bytes of manufacturer data (company ID onwards) start at `body`.
    @inlinable @inline(__always)
    static func iBeacon(at body: UnsafeRawPointer) -> IBeacon {
        IBeacon(uncheckedManufacturerData: UnsafeRawBufferPointer(start: body, count: IBeacon.manufacturerDataLength))
    }

    /// The advert every iBeacon sends, 30 bytes: flags (`02 01 xx`, any value), then Apple's 26-byte manufacturer
    /// structure with the iBeacon type and length (`1A FF 4C 00 02 15`) and 21 bytes running exactly to the end.
    /// Told by one 8-byte comparison, a ninth byte and the length. It is decided before anything else because it is
    /// the common case: reaching it by the general walk below costs every iBeacon report the walk's steps
    /// (docs/performance-history.md, "Decode", has the figures).
    @inlinable @inline(__always)
    static func isCanonicalIBeacon(_ base: UnsafeRawPointer, count: Int) -> Bool {
        count == 30
            && UInt64(littleEndian: base.loadUnaligned(as: UInt64.self)) & canonicalIBeaconMask
                == canonicalIBeaconPrefix
            && base.load(fromByteOffset: 8, as: UInt8.self) == 0x15
    }

    /// Bytes 0-7 of the canonical iBeacon advert as a little-endian word (`02 01 __ 1A FF 4C 00 02`), and the mask
    /// that leaves out byte 2, the flags' value.
    @usableFromInline static let canonicalIBeaconPrefix: UInt64 = 0x0200_4CFF_1A00_0102
    @usableFromInline static let canonicalIBeaconMask: UInt64 = 0xFFFF_FFFF_FF00_FFFF

    /// `02 01`, a flags structure's length and type, as a little-endian word.
    @usableFromInline static let flagsHeader: UInt16 = 0x0102

    /// What nearly every iBeacon, and most other Apple and AltBeacon adverts, send after their flags: one
    /// manufacturer-specific structure (at `offset`) that ends exactly at the end of the data. The walk would find
    /// just that; two bytes tell. (Compared as integers, a length byte never matches data longer than it can
    /// reach, so a long extended advert is walked.) At least 4 bytes: a company ID for `manufacturerRank`.
    @inlinable @inline(__always)
    static func isOneManufacturerStructure(_ base: UnsafeRawPointer, at offset: Int, count: Int) -> Bool {
        let rest = count &- offset
        return rest >= 4
            && Int(base.load(fromByteOffset: offset, as: UInt8.self)) == rest &- 1
            && base.load(fromByteOffset: offset &+ 1, as: UInt8.self) == manufacturerSpecific
    }

    /// What one manufacturer-specific structure's body (at least 2 bytes) shows: its rank, and whether it is an
    /// iBeacon prefix without an iBeacon's length.
    @inlinable @inline(__always)
    static func manufacturerRank(_ body: UnsafeRawPointer, bodyCount: Int) -> (rank: UInt8, malformed: Bool) {
        let company = u16(body)
        let code = bodyCount >= 4 ? u16(body + 2) : 0
        if company == appleCompanyID {
            // 02 15: the iBeacon type and length; anything but exactly 21 bytes after them is malformed.
            guard code == iBeaconCode else { return (Rank.appleOther, false) }
            return bodyCount == IBeacon.manufacturerDataLength ? (Rank.iBeacon, false) : (Rank.appleOther, true)
        }
        return (code == altBeaconCode ? Rank.altBeacon : Rank.other, false)
    }

    /// `02 15` after Apple's company ID, and AltBeacon's `BE AC`, as little-endian 16-bit words.
    @usableFromInline static let iBeaconCode: UInt16 = 0x1502
    @usableFromInline static let altBeaconCode: UInt16 = 0xACBE

    /// How specific a kind is: an advert is the most specific kind any of its structures shows (iBeacon, then
    /// AltBeacon, Eddystone, other Apple). A rank is its `AdvertKind`'s raw value, the cases being declared most
    /// specific first, so the walk keeps the smallest and the kind needs no mapping afterwards.
    @usableFromInline enum Rank {
        // Literals, not `AdvertKind.x.rawValue`: that would be a lazily initialised global, read through a call.
        // `theMostSpecificKindWins` fails if one of them does not match its kind.
        @usableFromInline static let iBeacon: UInt8 = 0
        @usableFromInline static let altBeacon: UInt8 = 1
        @usableFromInline static let eddystone: UInt8 = 2
        @usableFromInline static let appleOther: UInt8 = 3
        @usableFromInline static let other: UInt8 = 4

        @inlinable @inline(__always)
        static func kind(_ rank: UInt8) -> AdvertKind {
            // Every rank the walk produces is one of the five above, and `AdvertKind` is one byte holding its raw
            // value, so the cast is exact (`AdvertisingDataReferenceTests` compares every kind).
            unsafeBitCast(rank, to: AdvertKind.self)
        }
    }

    /// A little-endian 16-bit word at `bytes`, which the caller has bounds-checked.
    @inlinable @inline(__always)
    static func u16(_ bytes: UnsafeRawPointer) -> UInt16 {
        UInt16(littleEndian: bytes.loadUnaligned(as: UInt16.self))
    }
}
