import BeaconWire
import Testing

@Suite(.timeLimit(.minutes(20))) struct ValueFormatTests {
    @Test(arguments: [
        (Int64(0), 1, "0"), (7, 2, "07"), (-5, 4, "-0005"), (123_456, 3, "123456"), (-42, 1, "-42"),
        (.max, 1, "9223372036854775807"), (.min, 1, "-9223372036854775808"), (999, 6, "000999"),
    ])
    func decimalsMatchTheStandardLibrary(_ value: Int64, _ width: Int, _ expected: String) {
        var bytes: [UInt8] = Array("x".utf8)
        bytes.appendDecimal(value, width: width)
        #expect(String(decoding: bytes, as: UTF8.self) == "x" + expected)
    }

    @Test func hexBytesAreUpperCase() {
        var bytes: [UInt8] = []
        for byte: UInt8 in [0x00, 0x0A, 0xF0, 0xFF] { bytes.appendHexByte(byte) }
        #expect(String(decoding: bytes, as: UTF8.self) == "000AF0FF")
    }

    @Test func uuidRoundTripsInCanonicalUpperCase() throws {
        let uuid = try #require(BeaconUUID("21eecf71-d5c7-4a00-9b90-27c94b5146ea"))
        #expect(uuid.description == "21EECF71-D5C7-4A00-9B90-27C94B5146EA")
        #expect(BeaconUUID("21EECF71D5C74A009B9027C94B5146EA") == uuid)
    }

    @Test(arguments: [
        "", "21EECF71-D5C7-4A00-9B90-27C94B5146E", "21EECF71-D5C74-A00-9B90-27C94B5146EA", "zz",
        "21EECF71-D5C7-4A00-9B90-27C94B5146EAA",
    ])
    func malformedUUIDsAreRejected(_ text: String) {
        #expect(BeaconUUID(text) == nil)
    }

    @Test func regionParsesUUIDAndOptionalMajor() throws {
        let region = try #require(BeaconRegion("21EECF71-D5C7-4A00-9B90-27C94B5146EA:1"))
        #expect(region.major == 1)
        #expect(BeaconRegion("21EECF71-D5C7-4A00-9B90-27C94B5146EA")?.major == nil)
        #expect(BeaconRegion("21EECF71-D5C7-4A00-9B90-27C94B5146EA:65536") == nil)
        #expect(BeaconRegion("21EECF71-D5C7-4A00-9B90-27C94B5146EA:") == nil)
        let beacon = IBeacon(uuid: region.uuid, major: 2, minor: 3, measuredPower: -59)
        #expect(!region.contains(beacon))
        #expect(BeaconRegion(uuid: region.uuid).contains(beacon))
    }

    @Test func addressPrintsMostSignificantByteFirst() {
        #expect(BluetoothAddress(rawValue: 0xA4C1_38BF_6FAB).description == "A4:C1:38:BF:6F:AB")
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000000Z"),
        (Int64(1_714_557_600_500_002_000), "2024-05-01T10:00:00.500002Z"),
        (Int64(1_714_557_600_500_002_014), "2024-05-01T10:00:00.500002014Z"),
        (Int64(951_782_400_000_000_000), "2000-02-29T00:00:00.000000Z"),
        (Int64(-1_000), "1969-12-31T23:59:59.999999Z"),
    ])
    func timesPrintAsISO8601UTC(_ nanoseconds: Int64, _ text: String) {
        #expect(CaptureTime(nanosecondsSinceEpoch: nanoseconds).iso8601 == text)
    }
}
