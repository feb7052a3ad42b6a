public import Foundation

/// A rotating beacon the operator issued or imported (docs/rotating-beacon.md): its id, region and period, its key
/// sealed (`BeaconKeySealer`, with the id as additional data), and the hash of the code on its label.
public struct NewRotatingBeacon: Sendable, Equatable {
    public var id: String
    public var uuid: String
    public var period: Int
    public var sealedKey: String
    /// `ClaimCode.hash` of the code on its label.
    public var codeHash: String

    public init(id: String, uuid: String, period: Int, sealedKey: String, codeHash: String) {
        self.id = id
        self.uuid = uuid.uppercased()
        self.period = period
        self.sealedKey = sealedKey
        self.codeHash = codeHash
    }

    /// A new beacon's name: `rbn_` and 16 random hex digits.
    public static func newID() -> String { Secrets.newID(prefix: "rbn_") }

    /// Seconds per identity: 900 unless the operator says otherwise; at least 1, at most a day.
    public static let defaultPeriod = 900
    public static let periods = 1...86_400
}

/// A rotating beacon as `beacons list` shows it: never its key.
public struct ProvisionedRotatingBeacon: Sendable, Equatable {
    public var id: String
    public var uuid: String
    public var period: Int
    public var state: ProvisionedBeacon.State
    public var issuedAt: Date

    package init(id: String, uuid: String, period: Int, state: ProvisionedBeacon.State, issuedAt: Date) {
        self.id = id
        self.uuid = uuid
        self.period = period
        self.state = state
        self.issuedAt = issuedAt
    }
}
