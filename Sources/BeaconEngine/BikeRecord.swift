/// What beacond keeps about a missing bike: enough to name it in a sighting, nothing about its owner.
///
/// The registry's records carry more (an owner's `deviceToken`, for instance); those fields are never decoded,
/// so they cannot be stored, logged or printed by accident.
public struct BikeRecord: Hashable, Sendable {
    public var id: String
    /// The beacon's major, when the record names one; nil matches any major the region allows.
    public var major: UInt16?
    public var minor: UInt16
    public var make: String?
    public var model: String?
    public var colour: String?
    /// One of a rotating beacon's identities (`major` and `minor` are the identity's): its visits are its bike's.
    public var isRotating: Bool

    public init(
        id: String, major: UInt16?, minor: UInt16, make: String? = nil, model: String? = nil, colour: String? = nil,
        isRotating: Bool = false
    ) {
        self.id = id
        self.major = major
        self.minor = minor
        self.make = make
        self.model = model
        self.colour = colour
        self.isRotating = isRotating
    }
}
