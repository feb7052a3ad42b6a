/// The version of this package's release: beacond's and bike-registry's `--version`, beacond's `User-Agent` and
/// status, and the Debian packages' version (scripts/package-deb reads it from `beacond --version`).
public enum ReleaseVersion {
    public static let current = "0.2.0"
}
