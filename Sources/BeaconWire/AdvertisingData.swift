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
    @inlinable @inline(__always)
    public static func summarize(_ data: UnsafeRawBufferPointer) -> AdvertisingDataSummary {
        var summary = AdvertisingDataSummary()
        var offset = 0
        while offset < data.count {
            let length = Int(data[offset])
            if length == 0 { break }
            guard length <= data.count - offset - 1 else {
                summary.hadBadStructure = true
                break
            }
            let type = data[offset + 1]
            let body = UnsafeRawBufferPointer(rebasing: data[(offset + 2)..<(offset + 1 + length)])
            classify(type: type, body: body, into: &summary)
            offset += 1 + length
        }
        return summary
    }

    @inlinable @inline(__always)
    static func classify(type: UInt8, body: UnsafeRawBufferPointer, into summary: inout AdvertisingDataSummary) {
        switch type {
        case manufacturerSpecific:
            guard body.count >= 4 else {
                if body.count >= 2, littleEndianU16(body, 0) == appleCompanyID { upgrade(&summary, to: .appleOther) }
                return
            }
            let company = littleEndianU16(body, 0)
            if company == appleCompanyID {
                if body[2] == 0x02 && body[3] == 0x15 {
                    if body.count == IBeacon.manufacturerDataLength {
                        if summary.beacon == nil { summary.beacon = IBeacon(uncheckedManufacturerData: body) }
                        upgrade(&summary, to: .iBeacon)
                        return
                    }
                    summary.hadMalformedIBeacon = true
                }
                upgrade(&summary, to: .appleOther)
            } else if body[2] == 0xBE && body[3] == 0xAC {
                upgrade(&summary, to: .altBeacon)
            }
        case serviceData16:
            if body.count >= 2, littleEndianU16(body, 0) == eddystoneServiceUUID { upgrade(&summary, to: .eddystone) }
        case incompleteServiceUUIDs16, completeServiceUUIDs16:
            var index = 0
            while index + 1 < body.count {
                if littleEndianU16(body, index) == eddystoneServiceUUID { upgrade(&summary, to: .eddystone) }
                index += 2
            }
        default:
            break
        }
    }

    /// Keeps the most specific kind seen in the advert: iBeacon, then AltBeacon, Eddystone, other Apple.
    @inlinable @inline(__always)
    static func upgrade(_ summary: inout AdvertisingDataSummary, to kind: AdvertKind) {
        if rank(kind) > rank(summary.kind) { summary.kind = kind }
    }

    @inlinable @inline(__always)
    static func rank(_ kind: AdvertKind) -> Int {
        switch kind {
        case .iBeacon: 4
        case .altBeacon: 3
        case .eddystone: 2
        case .appleOther: 1
        case .other: 0
        }
    }

    @inlinable @inline(__always)
    static func littleEndianU16(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }
}
