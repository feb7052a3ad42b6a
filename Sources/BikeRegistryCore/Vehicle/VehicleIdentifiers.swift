import Foundation

/// What identifies a stolen motorbike to the police (issue 61), as its owner gives it: each optional. The frame
/// number (a VIN where it has a VIN's shape), the engine number, the registration plate with its country, the year, a
/// security-marking code (Datatag, MASTER and the like) and a short description of distinguishing marks.
///
/// Kept as written, for people to read; matched by `normalised` form (letters upper-cased, spaces and dashes
/// dropped), so that "WB 10-A12" and "wb10a12" are one plate. Checking is pure: the store seals them, the API
/// and the pages say what was refused.
public struct VehicleIdentifiers: Sendable, Equatable {
    public var frameNumber: String?
    public var engineNumber: String?
    public var plate: String?
    /// ISO 3166-1 alpha-2, upper case; given with a plate.
    public var plateCountry: String?
    public var year: Int?
    public var securityMarking: String?
    public var distinguishingMarks: String?
    /// The owner says the bike is registered in North America, where a VIN's ninth character is a check digit.
    public var registeredInNorthAmerica: Bool

    public init(
        frameNumber: String? = nil, engineNumber: String? = nil, plate: String? = nil, plateCountry: String? = nil,
        year: Int? = nil, securityMarking: String? = nil, distinguishingMarks: String? = nil,
        registeredInNorthAmerica: Bool = false
    ) {
        self.frameNumber = frameNumber
        self.engineNumber = engineNumber
        self.plate = plate
        self.plateCountry = plateCountry
        self.year = year
        self.securityMarking = securityMarking
        self.distinguishingMarks = distinguishingMarks
        self.registeredInNorthAmerica = registeredInNorthAmerica
    }

    /// The fields a police lookup matches on exactly.
    public enum Field: String, Sendable, CaseIterable {
        case frameNumber, engineNumber, plate
    }

    /// One field refused, and why, in words an owner can act on. The value itself is not repeated: it is
    /// personal data, and an error message may reach a log.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public var field: String
        public var reason: String
        public var description: String { "\(field): \(reason)" }
    }

    /// A value as lookups match it: letters upper-cased, spaces, tabs and dashes dropped.
    public static func normalised(_ text: String) -> String {
        String(text.uppercased().unicodeScalars.filter { !" \t-".unicodeScalars.contains($0) }.map(Character.init))
    }

    /// The normalised value of a lookup field, nil when it is not given.
    public func normalised(_ field: Field) -> String? {
        self[field].map(Self.normalised).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether the frame number is held to ISO 3779 as a VIN (it has a VIN's shape) rather than kept as written.
    public var frameNumberIsVIN: Bool { normalised(.frameNumber).map(VIN.hasShape) ?? false }

    /// Bounds on what is kept, in characters as written; the normalised identifiers also have a least length.
    public enum Bounds {
        public static let identifier = 4...30
        public static let plate = 2...12
        public static let securityMarking = 40
        public static let distinguishingMarks = 500
        public static let firstYear = 1885
    }

    /// Every field refused, in field order; empty when all are acceptable. `thisYear`: the latest year allowed is the
    /// next one (a model year runs ahead of the calendar).
    public func refusals(thisYear: Int) -> [Refusal] {
        var refusals: [Refusal] = []
        func refuse(_ field: String, _ reason: String) { refusals.append(Refusal(field: field, reason: reason)) }
        for (name, field) in [("frameNumber", Field.frameNumber), ("engineNumber", .engineNumber)] {
            guard let value = self[field] else { continue }
            if let problem = Self.identifierProblem(value, bounds: Bounds.identifier) { refuse(name, problem) }
        }
        if let vin = normalised(.frameNumber), VIN.hasShape(vin) {
            let forbidden = VIN.forbiddenLetters(in: vin)
            if !forbidden.isEmpty {
                refuse(
                    "frameNumber",
                    "a 17-character VIN never has the letters I, O or Q (ISO 3779); this one has "
                        + forbidden.map(String.init).joined(separator: ", ") + ": read them as 1 or 0?")
            } else if registeredInNorthAmerica, let expected = VIN.checkDigit(of: vin),
                vin[vin.index(vin.startIndex, offsetBy: 8)] != expected
            {
                refuse("frameNumber", "the ninth character is not the check digit a North American VIN carries")
            }
        }
        if let plate {
            if let problem = Self.identifierProblem(plate, bounds: Bounds.plate) { refuse("plate", problem) }
            if plateCountry == nil { refuse("plateCountry", "a plate needs its country (ISO 3166-1 alpha-2, as GB)") }
        }
        if let plateCountry {
            if CountryCode.normalised(plateCountry) == nil {
                refuse("plateCountry", "not an ISO 3166-1 alpha-2 country code (as GB, NL, IE)")
            } else if plate == nil {
                refuse("plateCountry", "given without a plate")
            }
        }
        if let year, !(Bounds.firstYear...(thisYear + 1)).contains(year) {
            refuse("year", "must be from \(Bounds.firstYear) to \(thisYear + 1)")
        }
        if let securityMarking, let problem = Self.textProblem(securityMarking, limit: Bounds.securityMarking) {
            refuse("securityMarking", problem)
        }
        if let distinguishingMarks,
            let problem = Self.textProblem(distinguishingMarks, limit: Bounds.distinguishingMarks)
        {
            refuse("distinguishingMarks", problem)
        }
        return refusals
    }

    private subscript(field: Field) -> String? {
        switch field {
        case .frameNumber: frameNumber
        case .engineNumber: engineNumber
        case .plate: plate
        }
    }

    /// An identifier is letters and digits, with spaces, dashes, dots and slashes between them as stamped.
    private static func identifierProblem(_ value: String, bounds: ClosedRange<Int>) -> String? {
        if value.count > bounds.upperBound { return "at most \(bounds.upperBound) characters" }
        guard value.unicodeScalars.allSatisfy({ isASCIIAlphanumeric($0) || " -./".unicodeScalars.contains($0) }) else {
            return "only letters A–Z, digits, spaces, dashes, dots and slashes"
        }
        let kept = normalised(value).filter { $0 != "." && $0 != "/" }
        return kept.count < bounds.lowerBound ? "at least \(bounds.lowerBound) letters or digits" : nil
    }

    private static func textProblem(_ value: String, limit: Int) -> String? {
        if value.count > limit { return "at most \(limit) characters" }
        // Lines as a form's text area sends them are kept; any other control character could drive a terminal.
        if value.unicodeScalars.contains(where: {
            $0.properties.generalCategory == .control && !"\n\r\t".unicodeScalars.contains($0)
        }) {
            return "no control characters"
        }
        return nil
    }

    private static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (("0"..."9").contains(scalar) || ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar))
    }
}
