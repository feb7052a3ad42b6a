import ArgumentParser
import BeaconPOSIX
import Foundation
import SystemPackage
import TextFormats

/// `serve`'s settings where an operator's service keeps them: a file of `key = value` lines (`--config FILE`, else
/// /etc/bike-registry/bike-registry.conf when it exists) and `BIKE_REGISTRY_…` variables (the unit's
/// `EnvironmentFile=`). Every key is one of serve's long options: `listen = …` in the file, `BIKE_REGISTRY_LISTEN`, and
/// `--listen` are one setting. So the one table is serve's own declarations: what ArgumentParser knows of them (its
/// `--experimental-dump-help` description) names the keys, and the values become arguments put before the command
/// line's, so ArgumentParser reads and checks each the one way it checks a flag. The command line wins over the
/// environment, the environment over the file.
struct ServeSettings {
    static let defaultPath = "/etc/bike-registry/bike-registry.conf"
    static let environmentPrefix = "BIKE_REGISTRY_"

    /// The file's, then the environment's, then the command line's arguments.
    var arguments: [String] = []
    /// Where each key given by the file or the environment came from (`FILE line N`, `BIKE_REGISTRY_X`), when the
    /// command line does not give it too: named beside an error about its flag.
    var origins: [String: String] = [:]
    /// Variables with the prefix that name no key: said, not refused (tests and other tools use the prefix too).
    var ignoredVariables: [String] = []

    /// One of serve's long options, and whether it takes a value (a flag does not).
    struct Key: Equatable {
        var name: String
        var takesValue: Bool
        var repeats: Bool
    }

    /// serve's keys, read from ArgumentParser's description of the command; `config` (which names the file), `help`
    /// and `version` are not settings.
    static let keys: [String: Key] = {
        struct Description: Decodable {
            struct Command: Decodable { var arguments: [Argument]? }
            struct Argument: Decodable {
                struct Name: Decodable {
                    var kind: String
                    var name: String
                }
                var kind: String
                var isRepeating: Bool
                var names: [Name]?
            }
            var command: Command
        }
        // The public form of `serve --experimental-dump-help`, ArgumentParser's description of a command for tools.
        let description = try? JSONDecoder().decode(Description.self, from: Data(Serve._dumpHelp().utf8))
        var keys: [String: Key] = [:]
        for argument in description?.command.arguments ?? [] where argument.kind != "positional" {
            for name in argument.names ?? [] where name.kind == "long" {
                guard !["config", "help", "version"].contains(name.name) else { continue }
                keys[name.name] = Key(
                    name: name.name, takesValue: argument.kind == "option", repeats: argument.isRepeating)
            }
        }
        return keys
    }()

    /// The variable a key is read from: `listen` → `BIKE_REGISTRY_LISTEN`.
    static func variable(_ key: String) -> String {
        ConfigFile.variable(for: key, prefix: environmentPrefix)
    }

    /// Every problem with the file or the environment, each naming where and which key.
    struct Problems: Error, CustomStringConvertible {
        var lines: [String]
        var description: String { lines.joined(separator: "\n") }
    }

    /// `commandLine`: serve's arguments, after `serve`. `readFile` returns nil for a file that is not there.
    init(
        commandLine: [String], environment: [String: String],
        readFile: (String) throws -> String? = ServeSettings.read
    ) throws(Problems) {
        var problems: [String] = []
        let named = Self.configPath(in: commandLine)
        let path = named ?? Self.defaultPath
        var file = ConfigFile(entries: [])
        do {
            if let text = try readFile(path) {
                file = ConfigFile(text: text)
            } else if named != nil {
                problems.append("\(path): no such file")
            }
        } catch {
            problems.append("\(path): \(error)")
        }
        problems += file.errors.map { "\(path): \($0)" }
        var given: [String: String] = [:]
        for entry in file.entries {
            let origin = "\(path) line \(entry.line)"
            guard let key = Self.keys[entry.key] else {
                problems.append(
                    "\(origin): \(entry.key): not a setting of serve (bike-registry serve --help lists them)")
                continue
            }
            if !key.repeats, let first = given[key.name] {
                problems.append("\(origin): \(key.name): given twice (first in \(first))")
                continue
            }
            given[key.name] = origin
            problems += append(key, entry.value, from: origin)
        }
        for (variable, value) in environment.sorted(by: { $0.key < $1.key })
        where variable.hasPrefix(Self.environmentPrefix) {
            guard let key = Self.keys.values.first(where: { Self.variable($0.name) == variable }) else {
                ignoredVariables.append(variable)
                continue
            }
            problems += append(key, value, from: variable)
        }
        guard problems.isEmpty else { throw Problems(lines: problems) }
        for key in Self.keys.keys where Self.gives(commandLine, key) { origins[key] = nil }
        arguments += commandLine
    }

    /// Adds one key's value as arguments, noting where it came from; a problem with it, if any.
    private mutating func append(_ key: Key, _ value: String, from origin: String) -> [String] {
        origins[key.name] = origin
        guard !key.takesValue else {
            // `--key=value`, so a value that starts with '-' is not read as another flag.
            arguments.append("--\(key.name)=\(value)")
            return []
        }
        switch value.lowercased() {
        case "true", "yes", "1": arguments.append("--\(key.name)")
        case "false", "no", "0": break
        default: return ["\(origin): \(key.name): expected true or false, got \"\(value.escapingControlCharacters)\""]
        }
        return []
    }

    /// The file `--config FILE` or `--config=FILE` names, if any.
    static func configPath(in arguments: [String]) -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == "--" { break }
            if argument == "--config", index + 1 < arguments.count { return arguments[index + 1] }
            if argument.hasPrefix("--config=") { return String(argument.dropFirst("--config=".count)) }
        }
        return nil
    }

    /// Whether the command line gives `--key` itself.
    static func gives(_ arguments: [String], _ key: String) -> Bool {
        arguments.contains { $0 == "--\(key)" || $0.hasPrefix("--\(key)=") }
    }

    /// The file's text, nil when it is not there; at most 1 MiB.
    static func read(_ path: String) throws -> String? {
        // One catch that rethrows, not `catch where`: Debian's Swift 6.2.3 crashes on a typed throw caught by a
        // pattern in a function that throws `any Error` (SIL verification: stack dealloc with empty stack).
        do {
            return String(decoding: try WholeFile.read(path: path, limit: 1 << 20), as: UTF8.self)
        } catch {
            if error.errno == .noSuchFileOrDirectory { return nil }
            throw error
        }
    }

    /// For an error ArgumentParser gives about a flag whose value came from the file or the environment: where.
    func origin(ofFlagIn message: String) -> String? {
        let named = origins.keys.filter { message.contains("--\($0) ") || message.contains("--\($0)'") }
        guard let key = named.max(by: { $0.count < $1.count }), let origin = origins[key] else { return nil }
        return "\(key) is set in \(origin)"
    }
}
