/// pcapng options: `code`, `length`, value padded to 32 bits; code 0 ends the list.
enum PcapNGOptions {
    static func forEach(in reader: inout ByteReader, order: ByteOrder, _ body: (UInt16, UnsafeRawBufferPointer) -> Void)
    {
        while let code = reader.u16(order), let length = reader.u16(order), code != 0 {
            guard let value = reader.slice(Int(length)) else { return }
            body(code, value)
            guard reader.skip((4 - Int(length) % 4) % 4) else { return }
        }
    }

    /// Wireshark names Linux Bluetooth interfaces `bluetooth0`, `bluetooth1`, …; BlueZ tools say `hci0`.
    /// Either gives the adapter index.
    static func adapterIndex(interfaceName value: UnsafeRawBufferPointer) -> UInt16? {
        let name = value.prefix { $0 != 0 }
        for prefix in ["bluetooth", "hci"] {
            let prefixBytes = Array(prefix.utf8)
            guard name.starts(with: prefixBytes) else { continue }
            let digits = name.dropFirst(prefixBytes.count)
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ (0x30...0x39).contains($0) }) else {
                return nil
            }
            return UInt16(exactly: digits.reduce(0) { $0 * 10 + Int($1 - 0x30) })
        }
        return nil
    }
}

/// An interface's timestamp units (`if_tsresol`, default microseconds) and offset (`if_tsoffset`).
struct PcapNGTimestampResolution {
    /// Units per second; `nil` when the interface declared a resolution finer than a 64-bit count can hold.
    var unitsPerSecond: UInt64? = 1_000_000
    var offsetSeconds: Int64 = 0

    /// The most significant bit chooses a power of two, otherwise a power of ten.
    mutating func setResolution(_ exponentByte: UInt8) {
        let exponent = Int(exponentByte & 0x7F)
        if exponentByte & 0x80 != 0 {
            unitsPerSecond = exponent < 64 ? UInt64(1) << UInt64(exponent) : nil
        } else {
            unitsPerSecond = exponent <= 19 ? (0..<exponent).reduce(UInt64(1)) { value, _ in value * 10 } : nil
        }
    }

    func time(_ units: UInt64) -> CaptureTime? {
        guard let unitsPerSecond, unitsPerSecond > 0 else { return nil }
        let seconds = units / unitsPerSecond
        let remainder = units % unitsPerSecond
        // remainder * 1e9 can exceed 64 bits for fine resolutions: divide the 128-bit product.
        let product = remainder.multipliedFullWidth(by: 1_000_000_000)
        let nanoseconds = unitsPerSecond.dividingFullWidth(product).quotient
        guard let wholeSeconds = Int64(exactly: seconds) else { return nil }
        let (total, overflow) = wholeSeconds.addingReportingOverflow(offsetSeconds)
        return overflow ? nil : CaptureTime(seconds: total, nanoseconds: Int64(nanoseconds))
    }
}
