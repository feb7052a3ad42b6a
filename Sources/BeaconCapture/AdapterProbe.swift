import BeaconPOSIX
internal import CBlueZ

#if canImport(Glibc)
import Glibc
#endif

/// What the kernel says about one Bluetooth adapter, read without any capability: whether it exists, its
/// address, whether it is up (powered), and whether rfkill blocks it. For `beacond doctor`.
public struct AdapterProbe: Sendable, Equatable {
    public var name: String
    public var address: String
    public var up: Bool
    /// nil when the adapter has no rfkill switch (sysfs shows none).
    public var softBlocked: Bool?
    public var hardBlocked: Bool?

    public init(name: String, address: String, up: Bool, softBlocked: Bool?, hardBlocked: Bool?) {
        self.name = name
        self.address = address
        self.up = up
        self.softBlocked = softBlocked
        self.hardBlocked = hardBlocked
    }

    /// The adapter `hciN` or with that address; throws `.noAdapter` when there is none, `.noBluetooth` when the
    /// kernel has no Bluetooth at all.
    public static func probe(_ adapter: String, sysfs: String = "/sys/class/bluetooth") throws(HCIError) -> AdapterProbe
    {
        // Opening an HCI socket (as hci_devinfo does) needs no capability; this one only tells a kernel without
        // Bluetooth apart, in words.
        close(try HCISocket.openRaw("ask the kernel about", name: adapter))
        let deviceID = try HCISocket.deviceID(named: adapter)
        var info = hci_dev_info()
        guard hci_devinfo(Int32(deviceID), &info) == 0 else {
            let error = errno
            if error == ENODEV {
                throw HCIError(.noAdapter, "no Bluetooth adapter \(adapter) (plugged in? `btmgmt info` lists them)")
            }
            throw HCIError(.io, "cannot ask the kernel about \(adapter): \(String(cString: strerror(error)))")
        }
        let name = "hci\(info.dev_id)"
        var text = [CChar](repeating: 0, count: 18)
        ba2str(&info.bdaddr, &text)
        let (soft, hard) = rfkill(of: name, sysfs: sysfs)
        return AdapterProbe(
            name: name, address: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
            up: info.flags & (1 << UInt32(HCI_UP)) != 0, softBlocked: soft, hardBlocked: hard)
    }

    /// The adapter's rfkill switch, from sysfs (`/sys/class/bluetooth/hci0/rfkill3/{soft,hard}`).
    static func rfkill(of name: String, sysfs: String) -> (soft: Bool?, hard: Bool?) {
        let directory = sysfs + "/" + name
        guard let handle = opendir(directory) else { return (nil, nil) }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard entryName.hasPrefix("rfkill") else { continue }
            func flag(_ file: String) -> Bool? {
                guard let bytes = try? WholeFile.read(path: directory + "/" + entryName + "/" + file, limit: 16) else {
                    return nil
                }
                return bytes.first.map { $0 != UInt8(ascii: "0") }
            }
            return (flag("soft"), flag("hard"))
        }
        return (nil, nil)
    }
}
