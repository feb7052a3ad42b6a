import BikeRegistryCore
import Foundation
import Testing

/// The identifiers the police know a bike by (issue 61): checked and normalised without a database.
@Suite(.timeLimit(.minutes(1))) struct VehicleIdentifiersTests {
    static let thisYear = 2026

    @Test func aPublishedVINCarriesTheCheckDigitWorkedOutHere() {
        // The worked example of 49 CFR 565's check digit, whose remainder is 10: X.
        #expect(VIN.checkDigit(of: "1M8GDM9AXKP042788") == "X")
        // Seventeen ones: the weights sum to 89, and 89 mod 11 is 1.
        #expect(VIN.checkDigit(of: "11111111111111111") == "1")
        #expect(VIN.checkDigit(of: "1M8GDM9AXKP04278") == nil, "sixteen characters")
        #expect(VIN.checkDigit(of: "1M8GDM9AXKP04278O") == nil, "an O")
    }

    @Test func theCheckDigitCatchesEveryChangeOfOneCharacter() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789ABCDEFGHJKLMNPRSTUVWXYZ")
        for _ in 0..<500 {
            var characters = (0..<17).map { _ in alphabet.randomElement(using: &generator)! }
            characters[8] = VIN.checkDigit(of: String(characters))!
            let vin = String(characters)
            let valid = VehicleIdentifiers(frameNumber: vin, registeredInNorthAmerica: true)
            #expect(valid.refusals(thisYear: Self.thisYear).isEmpty, "\(vin)")
            // Any other place (the ninth is the digit itself) changed to a character of another value is caught:
            // the weights are 2 to 10 and the sum is taken mod 11, a prime.
            let place = [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16].randomElement(using: &generator)!
            var changed = characters
            changed[place] = alphabet.filter { VIN.value(of: $0) != VIN.value(of: characters[place]) }
                .randomElement(using: &generator)!
            let wrong = VehicleIdentifiers(frameNumber: String(changed), registeredInNorthAmerica: true)
            #expect(wrong.refusals(thisYear: Self.thisYear).map(\.field) == ["frameNumber"], "\(String(changed))")
        }
        #expect(VIN.value(of: "A") == VIN.value(of: "J"), "letters of one value: the check cannot tell A from J")
        #expect(VIN.value(of: "O") == nil && VIN.value(of: "a") == nil)
    }

    @Test func theCheckDigitIsAskedOnlyOfABikeRegisteredInNorthAmerica() {
        let european = VehicleIdentifiers(frameNumber: "ZDMH400AA5B000001")
        #expect(european.refusals(thisYear: Self.thisYear).isEmpty, "ISO 3779 has no check digit outside North America")
        var american = european
        american.registeredInNorthAmerica = true
        #expect(american.refusals(thisYear: Self.thisYear).map(\.field) == ["frameNumber"])
    }

    @Test func aVINWithIOrOOrQIsRefusedAndSaysWhichLetters() {
        let bike = VehicleIdentifiers(frameNumber: "ZDMH4OOAA5B0I0001")
        let refusals = bike.refusals(thisYear: Self.thisYear)
        #expect(refusals.count == 1)
        #expect(refusals.first?.reason.contains("this one has O, I") == true, "\(refusals)")
        #expect(refusals.first?.description.contains("ZDMH4OOAA5B0I0001") == false, "the value is not repeated")
    }

    @Test func anythingWithoutAVINsShapeIsAFrameNumberKeptAsWritten() {
        for frame in ["WB10-12345", "ZD4 RH 0000 1234", "JH2RC36/000123", "ABCDEFGHIJKLMNOPQ1"] {
            let bike = VehicleIdentifiers(frameNumber: frame, registeredInNorthAmerica: true)
            #expect(!bike.frameNumberIsVIN, "\(frame)")
            #expect(
                bike.refusals(thisYear: Self.thisYear).isEmpty, "\(frame): \(bike.refusals(thisYear: Self.thisYear))")
            #expect(bike.frameNumber == frame)
        }
    }

    @Test func valuesAreMatchedUpperCasedWithoutSpacesOrDashes() {
        let bike = VehicleIdentifiers(frameNumber: "zdm-h400 aa5", engineNumber: " H400e-123 ", plate: "WB 10-a12")
        #expect(bike.normalised(.frameNumber) == "ZDMH400AA5")
        #expect(bike.normalised(.engineNumber) == "H400E123")
        #expect(bike.normalised(.plate) == "WB10A12")
        #expect(VehicleIdentifiers(plate: " - ").normalised(.plate) == nil, "nothing left is nothing given")
        #expect(VehicleIdentifiers.normalised("wb10a12") == VehicleIdentifiers.normalised("WB 10-A12"))
    }

    @Test func aPlateNeedsAnAssignedCountryAndACountryNeedsAPlate() {
        func fields(_ bike: VehicleIdentifiers) -> [String] { bike.refusals(thisYear: Self.thisYear).map(\.field) }
        #expect(fields(VehicleIdentifiers(plate: "WB10 ABC", plateCountry: "GB")).isEmpty)
        #expect(fields(VehicleIdentifiers(plate: "WB10 ABC", plateCountry: "gb")).isEmpty)
        #expect(fields(VehicleIdentifiers(plate: "WB10 ABC")) == ["plateCountry"])
        // UK is reserved, not assigned: Great Britain's code is GB.
        #expect(fields(VehicleIdentifiers(plate: "WB10 ABC", plateCountry: "UK")) == ["plateCountry"])
        #expect(fields(VehicleIdentifiers(plateCountry: "NL")) == ["plateCountry"])
        #expect(CountryCode.normalised(" ie ") == "IE")
    }

    @Test func everyFieldIsBoundedAndRefusedClearly() {
        let long = String(repeating: "A", count: 31)
        let refused = VehicleIdentifiers(
            frameNumber: long, engineNumber: "E1", plate: "W;DROP", plateCountry: "GB", year: 1884,
            securityMarking: String(repeating: "d", count: 41),
            distinguishingMarks: "scratch\u{1b}[2J" + String(repeating: "x", count: 10))
        let refusals = refused.refusals(thisYear: Self.thisYear)
        #expect(
            refusals.map(\.field) == [
                "frameNumber", "engineNumber", "plate", "year", "securityMarking", "distinguishingMarks",
            ], "\(refusals)")
        #expect(refusals[0].reason == "at most 30 characters")
        #expect(refusals[1].reason == "at least 4 letters or digits")
        #expect(refusals[2].reason.hasPrefix("only letters"))
        #expect(refusals[3].reason == "must be from 1885 to 2027")
        #expect(refusals[5].reason == "no control characters")
        let fine = VehicleIdentifiers(
            frameNumber: String(repeating: "A", count: 30), year: 2027,
            securityMarking: String(repeating: "d", count: 40),
            distinguishingMarks: "Café racer tank, dent on the left side.\nRed stripe.")
        #expect(fine.refusals(thisYear: Self.thisYear).isEmpty)
    }

    @Test(
        "The country codes are the ones Debian's iso-codes assigns",
        .enabled(if: FileManager.default.fileExists(atPath: "/usr/share/iso-codes/json/iso_3166-1.json")))
    func countryCodesMatchIsoCodes() throws {
        struct Entry: Decodable {
            var alpha2: String
            enum CodingKeys: String, CodingKey { case alpha2 = "alpha_2" }
        }
        struct File: Decodable {
            var entries: [Entry]
            enum CodingKeys: String, CodingKey { case entries = "3166-1" }
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/iso-codes/json/iso_3166-1.json"))
        let listed = Set(try JSONDecoder().decode(File.self, from: data).entries.map(\.alpha2))
        #expect(CountryCode.assigned == listed)
    }
}
