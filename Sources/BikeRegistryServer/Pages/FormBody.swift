import Foundation
import HTTPTypes
import Hummingbird

/// A posted HTML form (`application/x-www-form-urlencoded`): its fields by name, the last of a repeated name.
struct FormBody {
    let fields: [String: String]

    subscript(_ name: String) -> String? { fields[name] }

    /// The fields, or nil for another content type, an over-long body or broken percent-encoding: the pages'
    /// forms never send those.
    static func read(_ request: Request, limit: Int = 16 * 1024) async -> FormBody? {
        let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
        guard type?.lowercased() == "application/x-www-form-urlencoded",
            let buffer = try? await request.body.collect(upTo: limit)
        else { return nil }
        return parse(String(buffer: buffer))
    }

    static func parse(_ text: String) -> FormBody? {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else { return nil }
            fields[name] = value
        }
        return FormBody(fields: fields)
    }

    private static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
