public import StationSettings

/// Where the registry is and how to talk to it.
public struct RegistryConfiguration: Sendable {
    public typealias Location = RegistryLocation
    public typealias Authentication = RegistryAuthentication

    public var location: Location
    public var authentication: Authentication
    public var apiKey: APIKey?
    /// Named in every sighting (`stationId`), with the station's fixed position.
    public var stationID: String
    public var latitude: Double
    public var longitude: Double
    public var connectTimeout: Duration
    /// A whole `POST /sightings`, connection included; also the longest silence inside any answer.
    public var requestTimeout: Duration
    /// A whole `GET /bikes`, every byte of the list included: the largest list (16 MiB) on a Pi's slow uplink
    /// takes far longer than a sighting's post.
    public var listTimeout: Duration
    /// A `GET /bikes` answer larger than this is refused (65,536 bikes with long names fit in 16 MiB).
    public var maximumResponseBytes: Int
    /// How long the body of a sighting's answer is read, after its status has answered, before it is given up on
    /// (the sighting is delivered either way; reading it lets the connection be reused).
    public var answerBodyWait: Duration = .seconds(2)

    public init(
        location: Location, authentication: Authentication = .query, apiKey: APIKey? = nil, stationID: String,
        latitude: Double = 0, longitude: Double = 0, connectTimeout: Duration = .seconds(5),
        requestTimeout: Duration = .seconds(20), listTimeout: Duration = .seconds(120),
        maximumResponseBytes: Int = 16 * 1024 * 1024
    ) {
        self.location = location
        self.authentication = authentication
        self.apiKey = apiKey
        self.stationID = stationID
        self.latitude = latitude
        self.longitude = longitude
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.listTimeout = listTimeout
        self.maximumResponseBytes = maximumResponseBytes
    }
}

/// The registry API key. Its description is redacted, so interpolating it into a log line or an error by
/// mistake prints nothing secret.
public struct APIKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public let secret: String

    public init?(_ secret: String) {
        let trimmed = secret.trimmingWhitespace
        guard !trimmed.isEmpty else { return nil }
        self.secret = trimmed
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}

extension String {
    var trimmingWhitespace: String {
        let scalars = unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, scalars[start].properties.isWhitespace { start = scalars.index(after: start) }
        while end > start, scalars[scalars.index(before: end)].properties.isWhitespace {
            end = scalars.index(before: end)
        }
        return String(scalars[start..<end])
    }
}
