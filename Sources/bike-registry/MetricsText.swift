/// One sample of a page in Prometheus's text format: `name{label="value",…} value`.
struct MetricSample: Equatable {
    var name: String
    var labels: [String: String]
    var value: Double
}

/// Reads the samples of a page in Prometheus's text format (version 0.0.4), as `serve --metrics-listen` writes it:
/// comments and blank lines skipped, label values unescaped (`\\`, `\"`, `\n`), a timestamp after the value
/// ignored. A line it cannot read is skipped rather than trusted.
enum MetricsText {
    static func samples(_ text: String) -> [MetricSample] {
        text.split(separator: "\n").compactMap { line in line.first == "#" ? nil : sample(Substring(line)) }
    }

    static func sample(_ line: Substring) -> MetricSample? {
        guard let nameEnd = line.firstIndex(where: { $0 == "{" || $0 == " " }) else { return nil }
        let name = String(line[..<nameEnd])
        var rest = line[nameEnd...]
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                guard let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)...].first == "\"" else {
                    return nil
                }
                let label = String(rest[..<equals])
                var value = ""
                var index = rest.index(equals, offsetBy: 2)
                while index < rest.endIndex, rest[index] != "\"" {
                    if rest[index] == "\\", rest.index(after: index) < rest.endIndex {
                        index = rest.index(after: index)
                        value.append(rest[index] == "n" ? "\n" : rest[index])
                    } else {
                        value.append(rest[index])
                    }
                    index = rest.index(after: index)
                }
                guard index < rest.endIndex else { return nil }
                labels[label] = value
                rest = rest[rest.index(after: index)...]
                if rest.first == "," { rest = rest.dropFirst() }
                guard !rest.isEmpty else { return nil }
            }
            rest = rest.dropFirst()
        }
        guard let text = rest.split(separator: " ").first, let value = Double(text) ?? special(text) else {
            return nil
        }
        return MetricSample(name: name, labels: labels, value: value)
    }

    private static func special(_ text: Substring) -> Double? {
        switch text {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: nil
        }
    }
}
