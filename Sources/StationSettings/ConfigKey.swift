/// One configuration key, the one place it is spelled: its name (the file's key and the flag of the same name), what
/// its value looks like and means (the flag's help), how a value is read into a configuration, and how the value a
/// configuration holds is written back (what SIGHUP compares), and whether SIGHUP applies it. `DaemonConfiguration.table` lists them all; parsing,
/// the flags, `--help`, `check-config` and the shipped example's test all read that list.
public struct ConfigKey: Sendable {
    public let name: String
    /// The value's shape in `--help`: `s`, `path`, `uuid[:major]`.
    public let valueName: String
    public let help: String
    /// Given any number of times, each a value of one list (the file's lines or the flags, whichever comes last).
    public let repeatable: Bool
    /// Applies the values (one, unless repeatable): nil, or why one is wrong and which.
    let apply: @Sendable (inout DaemonConfiguration, [String]) -> (reason: String, index: Int)?
    /// The value a configuration holds, as text.
    let show: @Sendable (DaemonConfiguration) -> String
    /// A SIGHUP applies it at once; any other key changed by a SIGHUP waits for a restart, and is named as waiting.
    public private(set) var reloadable = false

    /// This key, applied by SIGHUP.
    func reloadableOnHangUp() -> ConfigKey {
        var key = self
        key.reloadable = true
        return key
    }

    /// A key of one value, checked by `parse` (nil and the reason, for a value it refuses).
    static func value<Value>(
        _ name: String, _ valueName: String, _ help: String,
        _ path: any (WritableKeyPath<DaemonConfiguration, Value> & Sendable),
        show: @escaping @Sendable (Value) -> String,
        parse: @escaping @Sendable (String) -> Result<Value, ConfigKey.Refusal>
    ) -> ConfigKey {
        ConfigKey(
            name: name, valueName: valueName, help: help, repeatable: false,
            apply: { configuration, values in
                switch parse(values[0]) {
                case .success(let value):
                    configuration[keyPath: path] = value
                    return nil
                case .failure(let refusal): return (refusal.reason, 0)
                }
            },
            show: { show($0[keyPath: path]) })
    }

    /// A whole number in `range`.
    static func integer(
        _ name: String, _ range: ClosedRange<Int>, _ valueName: String, _ help: String,
        _ path: any (WritableKeyPath<DaemonConfiguration, Int> & Sendable)
    ) -> ConfigKey {
        value(name, valueName, help, path, show: { "\($0)" }) { text in
            guard let number = Int(text), range.contains(number) else {
                return .failure(
                    Refusal("expected a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(text)\""))
            }
            return .success(number)
        }
    }

    /// A finite number in `range`.
    static func decimal(
        _ name: String, _ range: ClosedRange<Double>, _ valueName: String, _ help: String,
        _ path: any (WritableKeyPath<DaemonConfiguration, Double> & Sendable)
    ) -> ConfigKey {
        value(name, valueName, help, path, show: { "\($0)" }) { text in
            guard let number = Double(text), number.isFinite, range.contains(number) else {
                return .failure(
                    Refusal("expected a number from \(range.lowerBound) to \(range.upperBound), got \"\(text)\""))
            }
            return .success(number)
        }
    }

    /// A list: each value parsed alone, the list replacing the default whole.
    static func list<Element>(
        _ name: String, _ valueName: String, _ help: String,
        _ path: any (WritableKeyPath<DaemonConfiguration, [Element]> & Sendable),
        show: @escaping @Sendable (Element) -> String, parse: @escaping @Sendable (String) -> Element?,
        expected: String
    ) -> ConfigKey {
        ConfigKey(
            name: name, valueName: valueName, help: help, repeatable: true,
            apply: { configuration, values in
                var parsed: [Element] = []
                for (index, value) in values.enumerated() {
                    guard let element = parse(value) else { return ("expected \(expected), got \"\(value)\"", index) }
                    parsed.append(element)
                }
                configuration[keyPath: path] = parsed
                return nil
            },
            show: { $0[keyPath: path].map(show).joined(separator: ",") })
    }

    /// Why a value was refused.
    struct Refusal: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
