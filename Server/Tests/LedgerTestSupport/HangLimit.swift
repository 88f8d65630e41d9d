import Testing

extension TimeLimitTrait.Duration {
    /// The time limit of a test that could hang (a lane, a phone or a live server waiting on one another). A limit
    /// catches a hang, not slowness, so it outlasts the whole suite's run: `swift test` starts every test at once on
    /// two cores, and a test that takes 2 s alone took 155 s in a full local run and 231 s in a bare machine's CI run,
    /// past the 3 minutes it had. Ten minutes still ends a hung run well inside CI's budget.
    public static var hang: Self { .minutes(10) }
}
