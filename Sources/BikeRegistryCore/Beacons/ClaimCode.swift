/// The code printed on a provisioned beacon's label, which claims it (issue 38): 12 Crockford base32 digits, 60
/// random bits, written in groups of four (`7KQ2-M9XD-3FJA`). Crockford's alphabet has no I, L, O or U, so what
/// a person types is read leniently: case, dashes and spaces are ignored, and I and L are read as 1, O as 0.
/// Only its hash (`Secrets.hash` of the normal form) is stored.
public enum ClaimCode {
    package static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    /// Digits in a new code: 60 bits.
    public static let digits = 12
    /// An imported code (programmed elsewhere) has at least this many digits: 50 bits.
    public static let minimumDigits = 10
    /// Longer than any code we would print: input past it is refused before it is hashed.
    public static let maximumDigits = 32

    /// A new random code, grouped for the label.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = (0..<digits).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
        return grouped(String(decoding: digits, as: UTF8.self))
    }

    /// The code's normal form (upper case, no separators, I/L as 1 and O as 0), or nil when it is not one:
    /// another character, or too few or too many digits.
    public static func normalized(_ text: String, minimum: Int = minimumDigits) -> String? {
        var digits: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-"), UInt8(ascii: " "): continue
            case UInt8(ascii: "a")...UInt8(ascii: "z"): digits.append(mapped(byte - 32))
            default: digits.append(mapped(byte))
            }
            if digits.count > maximumDigits { return nil }
        }
        guard digits.count >= minimum, digits.allSatisfy(alphabet.contains) else { return nil }
        return String(decoding: digits, as: UTF8.self)
    }

    /// What is stored: the hash of the normal form. Nil when `text` is not a code.
    public static func hash(_ text: String) -> String? {
        normalized(text).map { Secrets.hash("claim:" + $0) }
    }

    /// `XXXX-XXXX-XXXX`: groups of four, for a person to read off a label.
    public static func grouped(_ normal: String) -> String {
        var text = ""
        for (index, character) in normal.enumerated() {
            if index > 0 && index % 4 == 0 { text.append("-") }
            text.append(character)
        }
        return text
    }

    private static func mapped(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "I"), UInt8(ascii: "L"): UInt8(ascii: "1")
        case UInt8(ascii: "O"): UInt8(ascii: "0")
        default: byte
        }
    }
}
