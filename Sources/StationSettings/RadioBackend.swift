/// The three ways to the radio, as the configuration names them. BeaconCapture opens each (`RadioBackend.open`).
public enum RadioBackend: String, Sendable, CaseIterable {
    case hci, monitor, dbus

    /// "hci, monitor or dbus", for a message that lists the choices.
    public static var spelledOut: String {
        let names = allCases.map(\.rawValue)
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
}
