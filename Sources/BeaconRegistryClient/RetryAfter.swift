/// `Retry-After` (RFC 9110 section 10.2.3): delay-seconds is honoured; an HTTP date is treated as "a minute",
/// because the Pi's clock cannot be trusted to compare dates with the registry's after a reboot without RTC.
/// The delay is capped at an hour, so a misconfigured registry cannot park deliveries for days.
enum RetryAfter {
    static let maximum = Duration.seconds(3_600)

    static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingWhitespace
        if let seconds = Int(trimmed), seconds >= 0 { return min(.seconds(seconds), maximum) }
        return trimmed.isEmpty ? nil : .seconds(60)
    }
}
