/// A file holding one secret (an API key, a password) on its first line: what `api-key-file`, `mqtt-password-file`
/// and systemd's credentials hold. At most 4 KiB is read; the line's end (`\n` or `\r\n`) is not part of the secret,
/// and an empty first line is refused. Errors name the file, never what is in it.
public enum SecretFile {
    public static func firstLine(path: String) throws(FileReadError) -> String {
        let bytes = try WholeFile.read(path: path, limit: 4_096)
        let line =
            String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
        let secret = line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
        guard !secret.isEmpty else { throw FileReadError(path: path, reason: "empty") }
        return secret
    }
}
