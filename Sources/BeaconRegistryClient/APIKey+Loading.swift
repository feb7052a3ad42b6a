import BeaconPOSIX

extension APIKey {
    /// Reads the key from a file (first line, surrounding whitespace dropped). Keys longer than 4 KiB or
    /// empty files are refused. Errors name the file, never its contents.
    public static func load(path: String) throws(RegistryError) -> APIKey {
        let line: String
        do {
            line = try SecretFile.firstLine(path: path)
        } catch {
            throw RegistryError(.file, "API key file \(error)")
        }
        guard let key = APIKey(line) else { throw RegistryError(.file, "API key file \(path): empty") }
        return key
    }

    /// The key systemd passes with `LoadCredential=NAME:…`, from `$CREDENTIALS_DIRECTORY/NAME`; nil when the
    /// service has no credentials directory.
    public static func fromCredentials(name: String, environment: [String: String]) throws(RegistryError) -> APIKey? {
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else { return nil }
        return try load(path: directory + "/" + name)
    }
}
