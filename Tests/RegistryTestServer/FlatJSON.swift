import Foundation

/// A JSON object of scalars as strings (numbers in their JSON spelling), enough to check a sighting body.
public enum FlatJSON {
    public static func object(_ text: String) -> [String: String]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            return nil
        }
        var result: [String: String] = [:]
        for (key, value) in object {
            switch value {
            case let string as String: result[key] = string
            case let number as NSNumber: result[key] = number.stringValue
            case is NSNull: result[key] = "null"
            default: return nil
            }
        }
        return result
    }
}
