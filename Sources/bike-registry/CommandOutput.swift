import ArgumentParser
import Foundation

/// What the operator's commands read and print alike.
enum CommandOutput {
    /// One JSON object on one line, keys sorted: what every `--json` prints, a line a record.
    static func printJSONLine(_ fields: [String: Any]) throws {
        print(
            String(decoding: try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]), as: UTF8.self))
    }

    /// A file's text, or standard input's for `-`; a usage error that names the file when it cannot be read.
    static func readInput(_ file: String) throws -> String {
        do {
            return file == "-"
                ? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
                : try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw ValidationError("cannot read \(file): \(error.localizedDescription)")
        }
    }
}
