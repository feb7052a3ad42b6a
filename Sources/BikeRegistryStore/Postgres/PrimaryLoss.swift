import DaemonSupport
import PostgresNIO

/// Whether an operation's failure says the host it ran on may no longer be the primary, so that another is looked
/// for: the host refused a write as read-only (a demoted primary, SQLSTATE 25006), is shutting down or starting (an
/// administrator's shutdown, a crash's, a standby not taking connections yet: 57P01 to 57P03), the connection broke
/// or could not be made (08…, a reset, a close), or the operation passed its deadline (a host that hangs). Anything
/// else (a constraint, a deadlock, a bad statement) is the operation's own and says nothing of the host.
enum PrimaryLoss {
    static func suspected(_ error: any Error) -> Bool {
        switch error {
        case is DeadlineExceeded:
            return true
        case let error as PostgresTransactionError:
            let inner = [error.beginError, error.closureError, error.commitError, error.rollbackError]
            return inner.contains { $0.map(suspected) ?? false }
        case let error as PSQLError:
            if let state = error.serverInfo?[.sqlState] { return suspected(sqlState: state) }
            return [.serverClosedConnection, .connectionError, .uncleanShutdown, .poolClosed, .clientClosedConnection]
                .contains(error.code)
        default:
            return false
        }
    }

    /// The SQLSTATEs that say so: 25006 read_only_sql_transaction, class 08 (connection exception), 57P01
    /// admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now.
    static func suspected(sqlState: String) -> Bool {
        sqlState == "25006" || sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }
}
