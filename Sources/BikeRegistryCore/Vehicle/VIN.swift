/// A vehicle identification number as ISO 3779 spells it: 17 characters from the digits and the letters but I, O
/// and Q (read too easily as 1 and 0). In North America (49 CFR 565) the ninth is a check digit over the other
/// sixteen; elsewhere the standard has none, so it is checked only where the owner says the bike is registered there.
public enum VIN {
    public static let length = 17

    /// Whether a normalised value (upper case, no spaces or dashes) has a VIN's shape: 17 characters, each a digit
    /// or a letter. Such a value is held to ISO 3779; anything else is a frame number.
    public static func hasShape(_ value: String) -> Bool {
        value.utf8.count == length && value.utf8.allSatisfy { isDigit($0) || ($0 >= 65 && $0 <= 90) }
    }

    /// The letters ISO 3779 leaves out that the value has, in order of first use.
    public static func forbiddenLetters(in value: String) -> [Character] {
        var seen: [Character] = []
        for character in value where "IOQ".contains(character) && !seen.contains(character) { seen.append(character) }
        return seen
    }

    /// The North American check digit a 17-character VIN should carry in its ninth place (`0`–`9` or `X`), or nil
    /// for a value that is not 17 characters of ISO 3779's alphabet.
    public static func checkDigit(of value: String) -> Character? {
        let bytes = Array(value.utf8)
        guard bytes.count == length else { return nil }
        var sum = 0
        for (index, byte) in bytes.enumerated() {
            guard let number = transliterated(byte) else { return nil }
            sum += number * weights[index]
        }
        let remainder = sum % 11
        return remainder == 10 ? "X" : Character(String(remainder))
    }

    /// Each place's weight in the check digit's sum (the ninth, the digit itself, weighs nothing).
    static let weights = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2]

    /// A character's value in the check digit's sum, nil for one ISO 3779 leaves out.
    public static func value(of character: Character) -> Int? {
        guard let byte = character.asciiValue else { return nil }
        return transliterated(byte)
    }

    /// A character's value in the sum: a digit its own; a letter A–H 1–8, J–R 1–9 (less O and Q), S–Z 2–9.
    static func transliterated(_ byte: UInt8) -> Int? {
        if isDigit(byte) { return Int(byte - 48) }
        switch byte {
        case 65...72: return Int(byte - 64)  // A–H: 1–8
        case 74...78: return Int(byte - 73)  // J–N: 1–5
        case 80: return 7  // P
        case 82: return 9  // R
        case 83...90: return Int(byte - 81)  // S–Z: 2–9
        default: return nil  // I, O, Q, or not a letter
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }
}
