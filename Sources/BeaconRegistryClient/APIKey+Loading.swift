import BeaconPOSIX

extension APIKey {
    /// Reads the key from a file (first line, surrounding whitespace dropped). Keys longer than 4 KiB or
    /// empty files are refused. Errors name the file, never its contents.
    public static func load(path: String) throws(RegistryError) -> APIKey {
        let bytes: [UInt8]
        do {
            bytes = try WholeFile.read(path: path, limit: 4_096)
        } catch {
            throw RegistryError(.file, "API key file \(error)")
        }
        let firstLine =
            String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
        guard let key = APIKey(String(firstLine)) else {
            throw RegistryError(.file, "API key file \(path): empty")
        }
        return key
    }

    /// The key systemd passes with `LoadCredential=NAME:…`, from `$CREDENTIALS_DIRECTORY/NAME`; nil when the
    /// service has no credentials directory.
    public static func fromCredentials(name: String, environment: [String: String]) throws(RegistryError) -> APIKey? {
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else { return nil }
        return try load(path: directory + "/" + name)
    }
}
