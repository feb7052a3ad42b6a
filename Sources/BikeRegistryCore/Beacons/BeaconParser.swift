import Foundation

/// A beacon's numbers as people give them, read one way wherever they are given: the owner's API and registration
/// page (`NewBikeFields`), the finder's look-up (`Finder.Beacon`) and the operator's command line
/// (`BeaconArgument`). Pure.
public enum BeaconParser {
    /// A major's or a minor's range: 16 bits, as the iBeacon frame carries them.
    public static let numbers = 0...65535

    /// The proximity UUID as the registry keeps it (upper case, hyphenated); nil for text that is not one.
    public static func uuid(_ text: some StringProtocol) -> String? { UUID(uuidString: String(text))?.uuidString }

    /// A major or a minor; nil outside `numbers`.
    public static func number(_ value: Int) -> Int? { numbers.contains(value) ? value : nil }

    /// A whole number in ASCII digits (an optional sign), as typed; nil for anything else.
    public static func integer(_ text: some StringProtocol) -> Int? {
        text.allSatisfy(\.isASCII) ? Int(text) : nil
    }

    /// A major or a minor typed as text; nil for text that is not a whole number in `numbers`.
    public static func number(_ text: some StringProtocol) -> Int? { integer(text).flatMap(number) }

    /// A beacon typed in three parts (a finder's, white space around each allowed); nil unless each part is right.
    public static func beacon(uuid: String, major: String, minor: String) -> (uuid: String, major: Int, minor: Int)? {
        func trimmed(_ text: String) -> String { text.trimmingCharacters(in: .whitespaces) }
        guard let uuid = self.uuid(trimmed(uuid)), let major = number(trimmed(major)),
            let minor = number(trimmed(minor))
        else { return nil }
        return (uuid, major, minor)
    }

    /// `UUID:MAJOR:MINOR`, or `UUID:MAJOR` (a region, its minor nil), as the command line takes them.
    public static func colonSeparated(_ text: String) -> (uuid: String, major: Int, minor: Int?)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), let uuid = uuid(parts[0]), let major = number(parts[1]) else { return nil }
        guard parts.count == 3 else { return (uuid, major, nil) }
        guard let minor = number(parts[2]) else { return nil }
        return (uuid, major, minor)
    }
}
