import Foundation

/// A statement written once for both databases: its text, the values bound to it, and the few words in which the two
/// dialects differ (PostgreSQL's row locks, a function's name). A value is never written into the text: each is bound,
/// and `rendered(for:)`, the one place placeholders are made, writes SQLite's `?` or PostgreSQL's `$1`, `$2`, ….
///
///     let statement: SQL = "UPDATE bike SET paused = TRUE WHERE id = \(bikeId)"
///     let locked: SQL = "SELECT 1 FROM bike WHERE id = \(id) \(SQL.forUpdate)"
struct SQL: Sendable, ExpressibleByStringInterpolation {
    enum Piece: Sendable {
        case text(String)
        case value(SQLValue)
        /// Words one dialect writes and the other leaves out or writes otherwise.
        case dialect(sqlite: String, postgres: String)
        /// Pieces, values among them, that only one dialect's statement has.
        case only(RegistrySchema.Dialect, [Piece])
    }

    private(set) var pieces: [Piece]

    init(stringLiteral text: String) { pieces = [.text(text)] }

    init(stringInterpolation: Interpolation) { pieces = stringInterpolation.pieces }

    init(sqlite: String, postgres: String) { pieces = [.dialect(sqlite: sqlite, postgres: postgres)] }

    private init(pieces: [Piece]) { self.pieces = pieces }

    /// A statement PostgreSQL runs and SQLite has no need of (a lock, where SQLite's one writer already orders
    /// transactions): for SQLite it is empty, and a driver runs nothing for it.
    static func postgresOnly(_ statement: SQL) -> SQL { SQL(pieces: [.only(.postgres, statement.pieces)]) }

    /// PostgreSQL's lock on the rows a transaction reads to change; SQLite's transaction holds the whole file.
    static let forUpdate = SQL(sqlite: "", postgres: "FOR UPDATE")

    struct Interpolation: StringInterpolationProtocol {
        var pieces: [Piece] = []

        init(literalCapacity: Int, interpolationCount: Int) { pieces.reserveCapacity(2 * interpolationCount + 1) }

        mutating func appendLiteral(_ literal: String) { pieces.append(.text(literal)) }

        /// A value, bound.
        mutating func appendInterpolation(_ value: some SQLBindable) { pieces.append(.value(value.sqlValue)) }

        /// A value or NULL, bound; a NULL keeps its type, which PostgreSQL needs where nothing else says it.
        mutating func appendInterpolation<Value: SQLBindable>(_ value: Value?) {
            pieces.append(.value(value?.sqlValue ?? .null(Value.sqlType)))
        }

        /// Another statement's pieces: a column list, a condition written once.
        mutating func appendInterpolation(_ fragment: SQL) { pieces += fragment.pieces }

        /// Text that is SQL, never a value: a table's or a column's name chosen by the code.
        mutating func appendInterpolation(raw text: String) { pieces.append(.text(text)) }
    }

    /// The text with the dialect's placeholders, and the values in their order.
    func rendered(for dialect: RegistrySchema.Dialect) -> (text: String, values: [SQLValue]) {
        var text = ""
        var values: [SQLValue] = []
        func render(_ pieces: [Piece]) {
            for piece in pieces {
                switch piece {
                case .text(let words): text += words
                case .dialect(let sqlite, let postgres): text += dialect == .sqlite ? sqlite : postgres
                case .only(let only, let inner): if only == dialect { render(inner) }
                case .value(let value):
                    values.append(value)
                    text += dialect == .sqlite ? "?" : "$\(values.count)"
                }
            }
        }
        render(pieces)
        return (text, values)
    }
}
