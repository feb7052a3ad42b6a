import BikeRegistryCore
import Foundation

/// A bike's targets' statements: a row of `notificationTarget` a channel, deleted with the bike.
enum TargetSQL {
    /// Saves `address` as the bike's target on `channel`, confirmed, in place of any before; nil removes it.
    static func save(_ channel: NotificationChannel, _ address: String?, bikeId: String) -> SQL {
        guard let address else {
            return "DELETE FROM notificationTarget WHERE bikeId = \(bikeId) AND channel = \(channel.rawValue)"
        }
        return upsert(
            bikeId: bikeId, channel: channel, address: address, state: .confirmed, unsubscribeKey: nil,
            confirmationHash: nil, confirmationExpiresAt: nil)
    }

    /// The bike's target on `channel`, whatever was there before.
    static func upsert(
        bikeId: String, channel: NotificationChannel, address: String, state: NotificationTarget.State,
        unsubscribeKey: String?, confirmationHash: String?, confirmationExpiresAt: Date?
    ) -> SQL {
        """
        INSERT INTO notificationTarget (bikeId, channel, target, state, unsubscribeKey, confirmationHash, confirmationExpiresAt)
        VALUES (\(bikeId), \(channel.rawValue), \(address), \(state.rawValue), \(unsubscribeKey), \(confirmationHash),
                \(confirmationExpiresAt))
        ON CONFLICT (bikeId, channel) DO UPDATE SET target = excluded.target, state = excluded.state, failure = NULL,
            unsubscribeKey = excluded.unsubscribeKey, confirmationHash = excluded.confirmationHash,
            confirmationExpiresAt = excluded.confirmationExpiresAt
        """
    }

    /// What a refusal for good does to the bike's target, if it is still the one refused.
    static func refused(_ refusal: TargetRefusal, error: String, of notification: PendingNotification) -> SQL {
        let which: SQL = """
            WHERE bikeId = \(notification.bikeId) AND channel = \(notification.channel.rawValue)
                AND target = \(notification.target)
            """
        switch refusal {
        case .remove: return "DELETE FROM notificationTarget \(which)"
        case .markFailing: return "UPDATE notificationTarget SET state = 'failing', failure = \(error) \(which)"
        }
    }
}
