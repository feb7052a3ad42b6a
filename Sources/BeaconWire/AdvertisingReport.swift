/// One advertising report from an LE Advertising Report or LE Extended Advertising Report event,
/// borrowing its data from the event.
public struct AdvertisingReport {
    public var address: BluetoothAddress
    public var addressType: AddressType
    /// `nil` when the controller reports 127, "RSSI not available".
    public var rssi: Int8?
    /// Legacy reports: the event type (0 ADV_IND … 4 SCAN_RSP). Extended reports: the 16-bit event
    /// properties (bit 4 set for legacy PDUs).
    public var eventType: UInt16
    public var isExtended: Bool
    public var data: UnsafeRawBufferPointer

    @inlinable
    init(
        address: BluetoothAddress, addressType: AddressType, rssi: Int8?, eventType: UInt16, isExtended: Bool,
        data: UnsafeRawBufferPointer
    ) {
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.eventType = eventType
        self.isExtended = isExtended
        self.data = data
    }
}

/// HCI LE Meta event decoding (Core spec Vol 4, Part E, §7.7.65).
public enum LEMetaEvent {
    public static let eventCode: UInt8 = 0x3E
    public static let advertisingReport: UInt8 = 0x02
    public static let extendedAdvertisingReport: UInt8 = 0x0D
    public static let directedAdvertisingReport: UInt8 = 0x0B
    /// Legacy advertising data is at most 31 bytes; the kernel drops longer reports.
    public static let maxLegacyDataLength = 31
    @usableFromInline static let rssiNotAvailable: Int8 = 127

    /// Calls `body` for each advertising report in an HCI event (`event` starts at the event code).
    /// Events that are not advertising reports are counted as skipped; malformed ones as dropped.
    @inlinable @inline(__always)
    public static func forEachReport(
        inEvent event: UnsafeRawBufferPointer,
        counters: inout DecodeCounters,
        _ body: (AdvertisingReport, inout DecodeCounters) -> Void
    ) {
        var reader = ByteReader(event)
        guard let code = reader.u8(), let length = reader.u8(), let parameters = reader.slice(Int(length)) else {
            counters.drop(.truncatedEvent)
            return
        }
        counters.hciEvents += 1
        guard code == eventCode, parameters.count >= 1 else {
            counters.skipped += 1
            return
        }
        var params = ByteReader(parameters)
        switch params.u8() {
        case advertisingReport: legacyReports(&params, counters: &counters, body)
        case extendedAdvertisingReport: extendedReports(&params, counters: &counters, body)
        default: counters.skipped += 1
        }
    }

    /// Whether an event (starting at its event code) is an LE Meta event carrying advertising reports of any
    /// kind: the live capture's evidence that the radio still hears, checked before any decoding.
    @inlinable @inline(__always)
    public static func carriesAdvertisingReports(_ event: UnsafeRawBufferPointer) -> Bool {
        guard event.count > 2, event[0] == eventCode else { return false }
        let subevent = event[2]
        return subevent == advertisingReport || subevent == extendedAdvertisingReport
            || subevent == directedAdvertisingReport
    }

    /// Reports laid out one after another (evt_type, addr_type, addr, length, data, rssi), as the Linux
    /// kernel reads them (`hci_le_adv_report_evt`), not as the spec's parallel arrays.
    @inlinable @inline(__always)
    static func legacyReports(
        _ reader: inout ByteReader, counters: inout DecodeCounters,
        _ body: (AdvertisingReport, inout DecodeCounters) -> Void
    ) {
        guard var remaining = reader.u8() else {
            counters.drop(.truncatedEvent)
            return
        }
        // Every advert the radio hears passes here, so the report's bounds are checked twice, once for its fixed
        // 9 bytes and once for its data and RSSI, and its fields are then read at fixed offsets. The cursor is a
        // pointer kept in a local (one register fewer than a base and an offset, in a loop short of registers),
        // moved with wrapping arithmetic: it never passes the event's end, a few hundred bytes on.
        // The count byte was read, so the buffer has a base address.
        let base = reader.bytes.baseAddress.unsafelyUnwrapped
        let end = base + reader.bytes.count
        var cursor = base + reader.offset
        defer { reader.offset = cursor - base }
        while remaining > 0 {
            remaining &-= 1
            let left = end - cursor
            guard left >= 9 else {
                counters.drop(.reportPastEvent)
                return
            }
            let report = cursor
            let length = Int(report.load(fromByteOffset: 8, as: UInt8.self))
            guard left >= 10 &+ length else {
                counters.drop(.reportPastEvent)
                return
            }
            cursor += 10 &+ length
            guard length <= maxLegacyDataLength else {
                counters.drop(.badReportLength)
                continue
            }
            counters.advertisingReports &+= 1
            body(
                AdvertisingReport(
                    address: BluetoothAddress(wire: report + 2),
                    addressType: AddressType(hci: report.load(fromByteOffset: 1, as: UInt8.self)),
                    rssi: rssiValue(report.load(fromByteOffset: 9 &+ length, as: UInt8.self)),
                    eventType: UInt16(report.load(as: UInt8.self)), isExtended: false,
                    data: UnsafeRawBufferPointer(start: report + 9, count: length)), &counters)
        }
    }

    /// Extended reports: 24 fixed bytes (event properties, address, PHYs, SID, TX power, RSSI, periodic
    /// interval, direct address) then the data. Legacy PDUs in them keep the 31-byte limit.
    @inlinable
    static func extendedReports(
        _ reader: inout ByteReader, counters: inout DecodeCounters,
        _ body: (AdvertisingReport, inout DecodeCounters) -> Void
    ) {
        guard var remaining = reader.u8() else {
            counters.drop(.truncatedEvent)
            return
        }
        while remaining > 0 {
            remaining -= 1
            guard let eventType = reader.u16(.little), let addressType = reader.u8(),
                let address = BluetoothAddress(wire: &reader),
                reader.skip(4),  // primary PHY, secondary PHY, SID, TX power
                let rssi = reader.u8(),
                reader.skip(9),  // periodic advertising interval, direct address type and address
                let length = reader.u8(), let data = reader.slice(Int(length))
            else {
                counters.drop(.reportPastEvent)
                return
            }
            let isLegacyPDU = eventType & 0x10 != 0
            guard !isLegacyPDU || data.count <= maxLegacyDataLength else {
                counters.drop(.badReportLength)
                continue
            }
            counters.advertisingReports += 1
            body(
                AdvertisingReport(
                    address: address, addressType: AddressType(hci: addressType), rssi: rssiValue(rssi),
                    eventType: eventType, isExtended: true, data: data), &counters)
        }
    }

    @inlinable @inline(__always)
    static func rssiValue(_ byte: UInt8) -> Int8? {
        let value = Int8(bitPattern: byte)
        return value == rssiNotAvailable ? nil : value
    }
}
