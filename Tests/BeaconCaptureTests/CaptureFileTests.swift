import BeaconCapture
import BeaconTestSupport
import BeaconWire
import CBlueZ
import Foundation
import Testing

@Suite(.timeLimit(.minutes(20))) struct CaptureFileTests {
    @Test func missingFileNamesThePathAndTheReason() {
        #expect {
            try CaptureFile(path: "/nonexistent/capture.pcap")
        } throws: { error in
            String(describing: error) == "/nonexistent/capture.pcap: no such file or directory"
        }
    }

    @Test func directoryAndEmptyFileAreRefusedClearly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(throws: CaptureFileError.self) { try CaptureFile(path: directory.path) }
        let empty = directory.appendingPathComponent("empty.pcap")
        _ = FileManager.default.createFile(atPath: empty.path, contents: Data())
        #expect { try CaptureFile(path: empty.path) } throws: { String(describing: $0).hasSuffix("the file is empty") }
    }

    @Test(arguments: Fixtures.edgeCaptures + Fixtures.sharedCaptures)
    func fileReaderMatchesInMemoryDecode(_ capture: URL) throws {
        let file = try CaptureFile(path: capture.path, bufferCapacity: 1_024)
        var decoder = AdvertDecoder()
        var adverts: [Advert] = []
        try file.forEachRecord { record, _ in decoder.decode(record) { adverts.append($0) } }
        #expect(adverts == (try Decode.file(capture)).adverts.map(\.advert))
    }

    /// BeaconWire spells out the HCI constants itself (it must not import C); they must be the kernel's.
    @Test func wireConstantsMatchLibbluetooth() {
        #expect(HCIPacket.Kind.event.rawValue == UInt8(HCI_EVENT_PKT))
        #expect(HCIPacket.Kind.command.rawValue == UInt8(HCI_COMMAND_PKT))
        #expect(HCIPacket.Kind.acl.rawValue == UInt8(HCI_ACLDATA_PKT))
        #expect(LEMetaEvent.eventCode == UInt8(EVT_LE_META_EVENT))
        #expect(LEMetaEvent.advertisingReport == UInt8(EVT_LE_ADVERTISING_REPORT))
        #expect(LEMetaEvent.maxLegacyDataLength == 31)
    }

    /// Address formatting agrees with libbluetooth's ba2str for the same six wire bytes.
    @Test func addressFormattingMatchesBa2str() {
        let wire: [UInt8] = [0xAB, 0x6F, 0xBF, 0x38, 0xC1, 0xA4]
        var address = bdaddr_t()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: wire) }
        var text = [CChar](repeating: 0, count: 18)
        _ = ba2str(&address, &text)
        let expected = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let decoded = wire.withUnsafeBytes { bytes -> String in
            var reader = ByteReader(bytes)
            return BluetoothAddress(wire: &reader)!.description
        }
        #expect(decoded == expected)
    }
}
