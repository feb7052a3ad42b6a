import ArgumentParser

/// A duration on the command line: a whole number and a unit, `s`, `m`, `h` or `d` (`15s`, `2m`, `30d`); a bare
/// number is seconds.
struct DurationArgument: ExpressibleByArgument, CustomStringConvertible, Sendable {
    let seconds: Int
    let description: String

    init(seconds: Int, _ description: String) {
        self.seconds = seconds
        self.description = description
    }

    init?(argument: String) {
        let units = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        let unit = argument.last.map(String.init).flatMap { units[$0] }
        let number = unit == nil ? Substring(argument) : argument.dropLast()
        guard !number.isEmpty, number.allSatisfy(\.isASCII), let value = Int(number), value >= 0,
            value <= Int(Int32.max) / (unit ?? 1)
        else { return nil }
        seconds = value * (unit ?? 1)
        description = argument
    }

    var duration: Duration { .seconds(seconds) }

    static var defaultCompletionKind: CompletionKind { .default }
}
