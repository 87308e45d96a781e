/// The `grpc-timeout` format: up to 8 ASCII digits followed by a unit
/// (`H` hours, `M` minutes, `S` seconds, `m` milliseconds, `u` microseconds, `n` nanoseconds).
public enum GRPCTimeout {
    /// Parses a `grpc-timeout` value; `nil` when it is malformed.
    public static func parse(_ text: String) -> Duration? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8.count <= 9 else { return nil }
        var amount: Int64 = 0
        for byte in utf8.dropLast() {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            amount = amount * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        switch utf8.last! {
        case UInt8(ascii: "H"): return .seconds(amount * 3600)
        case UInt8(ascii: "M"): return .seconds(amount * 60)
        case UInt8(ascii: "S"): return .seconds(amount)
        case UInt8(ascii: "m"): return .milliseconds(amount)
        case UInt8(ascii: "u"): return .microseconds(amount)
        case UInt8(ascii: "n"): return .nanoseconds(amount)
        default: return nil
        }
    }

    /// Formats a duration in the finest unit that keeps it within 8 digits, rounding up so a
    /// deadline is never shortened by the encoding. Negative durations encode as `0n`; durations
    /// beyond the format's range saturate at `99999999H`.
    public static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return "0n" }
        let nanos = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let fraction = (attoseconds + 999_999_999) / 1_000_000_000
        let sum = nanos.partialValue.addingReportingOverflow(fraction)
        guard !nanos.overflow, !sum.overflow, sum.partialValue <= Int64.max - 3_600_000_000_000 else {
            return "99999999H"
        }
        let totalNanos = sum.partialValue
        let units: [(Int64, Character)] = [
            (1, "n"), (1_000, "u"), (1_000_000, "m"), (1_000_000_000, "S"), (60_000_000_000, "M"),
            (3_600_000_000_000, "H"),
        ]
        for (scale, unit) in units {
            let value = (totalNanos + scale - 1) / scale
            if value <= 99_999_999 { return "\(value)\(unit)" }
        }
        return "99999999H"
    }
}
