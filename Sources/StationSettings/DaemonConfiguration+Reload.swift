extension DaemonConfiguration {
    /// The keys a SIGHUP applies at once, marked so in the table: where the registry is and how beacond signs in
    /// to it. The API key file is read again on every SIGHUP, so a rotated key needs no restart.
    public static let reloadableKeys = Set(table.filter(\.reloadable).map(\.name))

    /// Keys whose value differs, sorted.
    public func changedKeys(from other: DaemonConfiguration) -> [String] {
        let mine = settings
        let theirs = other.settings
        return mine.keys.filter { mine[$0] != theirs[$0] }.sorted()
    }
}
