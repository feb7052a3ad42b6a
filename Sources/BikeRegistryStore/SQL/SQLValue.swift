import BikeRegistryCore
import Foundation

/// A value as both databases take and give it: the column types the schema uses (`RegistrySchema`). A time is seconds
/// since 1970 (`real`). SQLite gives a boolean as an integer (0 or 1) and PostgreSQL as a boolean; both read as `Bool`.
enum SQLValue: Sendable, Equatable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case boolean(Bool)
    /// NULL, and what it stands in for (`unknown` in a row SQLite gave).
    case null(SQLType)
}

enum SQLType: Sendable, Equatable {
    case integer, real, text, boolean, unknown
}

/// A Swift value a statement binds.
protocol SQLBindable: Sendable {
    var sqlValue: SQLValue { get }
    static var sqlType: SQLType { get }
}

extension String: SQLBindable {
    var sqlValue: SQLValue { .text(self) }
    static var sqlType: SQLType { .text }
}

extension Int: SQLBindable {
    var sqlValue: SQLValue { .integer(Int64(self)) }
    static var sqlType: SQLType { .integer }
}

extension Int64: SQLBindable {
    var sqlValue: SQLValue { .integer(self) }
    static var sqlType: SQLType { .integer }
}

extension Double: SQLBindable {
    var sqlValue: SQLValue { .real(self) }
    static var sqlType: SQLType { .real }
}

extension Bool: SQLBindable {
    var sqlValue: SQLValue { .boolean(self) }
    static var sqlType: SQLType { .boolean }
}

/// Seconds since 1970, as every time in the schema is kept.
extension Date: SQLBindable {
    var sqlValue: SQLValue { .real(timeIntervalSince1970) }
    static var sqlType: SQLType { .real }
}

/// A row as either database gave it, its columns in the statement's order.
struct SQLRow: Sendable {
    var values: [SQLValue]

    /// The column at `index` as `Value`; a missing column or one of another type is an error naming it.
    func decode<Value: SQLDecodable>(_ index: Int, as type: Value.Type = Value.self) throws -> Value {
        guard values.indices.contains(index) else {
            throw RegistryStoreError("the database gave no column \(index) (\(values.count) columns)")
        }
        guard let value = Value(sqlValue: values[index]) else {
            throw RegistryStoreError("the database's column \(index) is \(values[index]), not \(Value.self)")
        }
        return value
    }
}

/// A Swift value a row's column is read as; nil when the column holds something else.
protocol SQLDecodable {
    init?(sqlValue: SQLValue)
}

extension String: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard case .text(let text) = sqlValue else { return nil }
        self = text
    }
}

extension Int64: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard case .integer(let number) = sqlValue else { return nil }
        self = number
    }
}

extension Int: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard let number = Int64(sqlValue: sqlValue) else { return nil }
        self = Int(number)
    }
}

extension Double: SQLDecodable {
    /// SQLite gives a REAL column's whole number as an integer when an expression made it (`max`, `coalesce`).
    init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .real(let number): self = number
        case .integer(let number): self = Double(number)
        default: return nil
        }
    }
}

extension Bool: SQLDecodable {
    init?(sqlValue: SQLValue) {
        switch sqlValue {
        case .boolean(let truth): self = truth
        case .integer(let number): self = number != 0
        default: return nil
        }
    }
}

extension Date: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard let seconds = Double(sqlValue: sqlValue) else { return nil }
        self.init(timeIntervalSince1970: seconds)
    }
}

extension Optional: SQLDecodable where Wrapped: SQLDecodable {
    init?(sqlValue: SQLValue) {
        if case .null = sqlValue {
            self = .none
        } else if let value = Wrapped(sqlValue: sqlValue) {
            self = .some(value)
        } else {
            return nil
        }
    }
}
