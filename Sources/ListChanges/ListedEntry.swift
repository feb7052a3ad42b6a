/// One bike of the stations' list as both programs hold it: what `GET /bikes` lists for it (docs/registry-api.yaml,
/// Bike), and what its changes add, replace, move and remove. A fixed beacon's bike has a minor (and a major); a
/// rotating beacon's has its window's identities instead, each `major << 16 | minor`.
public struct ListedEntry: Sendable, Equatable {
    public var id: String
    /// The beacon's UUID as listed (a registry may leave it out: the station's region's is meant).
    public var uuid: String?
    public var major: Int?
    public var minor: Int
    /// A rotating beacon's identities; empty for a fixed beacon's bike.
    public var identities: [UInt32]
    public var make: String?
    public var model: String?
    public var colour: String?

    public init(
        id: String, uuid: String?, major: Int?, minor: Int, identities: [UInt32] = [], make: String? = nil,
        model: String? = nil, colour: String? = nil
    ) {
        self.id = id
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.identities = identities
        self.make = make
        self.model = model
        self.colour = colour
    }

    public var isRotating: Bool { !identities.isEmpty }

    /// The same bike with its window's identities changed and nothing else.
    func sameBeyondIdentities(_ other: ListedEntry) -> Bool {
        var other = other
        other.identities = identities
        return other == self
    }
}

extension ListedEntry {
    /// The order the changes name kept rotating bikes in: their ids' bytes, whatever the locale.
    public static func idOrder(_ left: String, _ right: String) -> Bool {
        left.utf8.lexicographicallyPrecedes(right.utf8)
    }
}
