/// One decoded advertisement: a fixed-size value that owns nothing, so it can be copied into a ring
/// buffer without allocating.
public struct Advert: Hashable, Sendable {
    public var time: CaptureTime?
    public var adapter: UInt16?
    public var address: BluetoothAddress
    public var addressType: AddressType
    public var rssi: Int8?
    public var kind: AdvertKind
    /// Present exactly when `kind == .iBeacon`.
    public var beacon: IBeacon?

    @inlinable
    public init(
        time: CaptureTime?, adapter: UInt16?, address: BluetoothAddress, addressType: AddressType,
        rssi: Int8?, kind: AdvertKind, beacon: IBeacon?
    ) {
        self.time = time
        self.adapter = adapter
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.kind = kind
        self.beacon = beacon
    }
}
