import SkiffCore
import Testing

@Suite("grpc-timeout (GRPCTimeout)")
struct TimeoutTests {
    @Test(
        "valid values parse",
        arguments: [
            ("1S", Duration.seconds(1)),
            ("250m", .milliseconds(250)),
            ("5S", .seconds(5)),
            ("100000u", .microseconds(100_000)),
            ("7n", .nanoseconds(7)),
            ("2M", .seconds(120)),
            ("1H", .seconds(3_600)),
            ("0S", .zero),
            ("0n", .zero),
            ("00000001S", .seconds(1)),
            ("99999999n", .nanoseconds(99_999_999)),
            ("99999999H", .seconds(99_999_999 * 3_600)),
        ]
    )
    func parsesValid(text: String, expected: Duration) {
        #expect(GRPCTimeout.parse(text) == expected)
    }

    @Test(
        "malformed values are rejected",
        arguments: [
            "",  // empty
            "S",  // no digits
            "1",  // no unit
            "100",  // no unit
            "123456789S",  // 9 digits
            "000000000S",  // 9 digits, even if zero
            "1s",  // not a unit (seconds are "S")
            "1h",
            "1x",
            "1SS",
            "-1S",  // negative
            "+1S",
            " 1S",
            "1S ",
            "1 S",
            "1.5S",
            "１S",  // a non-ASCII digit
            "1Ｓ",
        ]
    )
    func rejectsMalformed(text: String) {
        #expect(GRPCTimeout.parse(text) == nil)
    }

    @Test(
        "format picks the finest unit that fits in 8 digits",
        arguments: [
            (Duration.nanoseconds(1), "1n"),
            (.nanoseconds(99_999_999), "99999999n"),
            (.nanoseconds(100_000_000), "100000u"),
            (.milliseconds(250), "250000u"),
            (.seconds(1), "1000000u"),
            (.seconds(99), "99000000u"),
            (.seconds(100), "100000m"),
            (.seconds(3_600), "3600000m"),
            (.seconds(172_800), "172800S"),
            (.seconds(100_000_000), "1666667M"),
            (.seconds(6_000_000_000), "1666667H"),
        ]
    )
    func formatUnits(duration: Duration, expected: String) {
        #expect(GRPCTimeout.format(duration) == expected)
    }

    @Test("format rounds up, never shortening the deadline")
    func formatRoundsUp() {
        #expect(GRPCTimeout.format(.nanoseconds(100_000_001)) == "100001u")
        #expect(GRPCTimeout.format(Duration(secondsComponent: 0, attosecondsComponent: 1)) == "1n")
        #expect(GRPCTimeout.format(Duration(secondsComponent: 0, attosecondsComponent: 1_500_000_000)) == "2n")
        #expect(GRPCTimeout.format(.seconds(100) + .nanoseconds(1)) == "100001m")
    }

    @Test("zero and negative durations format as 0n")
    func formatNonPositive() {
        #expect(GRPCTimeout.format(.zero) == "0n")
        #expect(GRPCTimeout.format(.nanoseconds(-1)) == "0n")
        #expect(GRPCTimeout.format(.seconds(-30)) == "0n")
    }

    @Test("format then parse gives at least the original duration, within one unit")
    func formatParseRoundTrip() throws {
        var samples: [Duration] = []
        var value: Int64 = 1
        while value < 5_000_000_000_000_000 {  // 1 ns … ~58 days, in uneven steps
            samples.append(.nanoseconds(value))
            samples.append(.nanoseconds(value + 1))
            value = value * 7 + 3
        }
        samples.append(.seconds(86_400 * 365 * 200))  // 200 years
        for duration in samples {
            let text = GRPCTimeout.format(duration)
            #expect(text.utf8.count <= 9, "\(duration) → \(text)")
            let parsed = try #require(GRPCTimeout.parse(text), "\(duration) → \(text) does not parse")
            #expect(parsed >= duration, "\(duration) → \(text) is shorter")
            let unit: Duration =
                switch text.last {
                case "n": .nanoseconds(1)
                case "u": .microseconds(1)
                case "m": .milliseconds(1)
                case "S": .seconds(1)
                case "M": .seconds(60)
                default: .seconds(3_600)
                }
            #expect(parsed - duration < unit + .nanoseconds(1), "\(duration) → \(text) rounds by more than one unit")
        }
    }

    /// Durations near Int64.max nanoseconds (≈ 292 years). Found by this suite: the nanosecond
    /// total wraps (`&+`) and the result is a negative, unparseable "…n" value.
    @Test("format near the Int64 nanosecond limit still gives a valid, not shorter, timeout")
    func formatNearNanosecondLimit() throws {
        let duration = Duration(secondsComponent: 9_223_372_036, attosecondsComponent: 999_999_999_000_000_000)
        let text = GRPCTimeout.format(duration)
        let parsed = try #require(GRPCTimeout.parse(text), "format(\(duration)) returned \"\(text)\"")
        #expect(parsed >= duration)
    }

    /// Durations above Int64.max nanoseconds. Found by this suite: `totalNanos + scale - 1`
    /// overflows and traps, so formatting a very long (e.g. "practically infinite") deadline crashes.
    @Test("format of a duration above Int64.max nanoseconds does not trap")
    func formatHugeDurationDoesNotTrap() async {
        await #expect(processExitsWith: .success) {
            let text = GRPCTimeout.format(.seconds(Int64.max))
            precondition(GRPCTimeout.parse(text) != nil)
        }
    }
}
