import Synchronization

/// One run at a time of a costly read (a store query behind `/metrics` or `/readyz`), its
/// value reused while it is fresh: however many requests come at once, and however often,
/// the read runs at most once per `freshFor`, and never twice at the same time. A flood of
/// scrapes costs the store one query, not a backlog of them.
///
/// A run is never cancelled: a caller that stops waiting (a deadline of its own) leaves it to
/// finish, and the next caller waits for that same run rather than starting another. So the
/// read must end by itself (the stores bound every call with their own timeouts): one that
/// never did would be waited for by every caller after it.
public final class SharedRefresh<Value: Sendable>: Sendable {
    private struct State: ~Copyable {
        /// The run in progress, if any.
        var running: Task<Value, Never>?
        /// The last value, and when its run ended.
        var last: (at: ContinuousClock.Instant, value: Value)?
    }

    private let state = Mutex(State())
    private let freshFor: Duration
    private let read: @Sendable () async -> Value

    /// Shares the runs of `read`; a value is reused for `freshFor` after its run ends.
    public init(freshFor: Duration, _ read: @escaping @Sendable () async -> Value) {
        self.freshFor = freshFor
        self.read = read
    }

    /// A value still fresh, or that of the run in progress, or of a run started now.
    public func value() async -> Value {
        let answer: Answer = state.withLock { state in
            if let last = state.last, last.at.duration(to: .now) < freshFor { return .fresh(last.value) }
            if let running = state.running { return .running(running) }
            let running = Task { [read] in
                let value = await read()
                self.finished(value)
                return value
            }
            state.running = running
            return .running(running)
        }
        switch answer {
        case .fresh(let value): return value
        case .running(let run): return await run.value
        }
    }

    private enum Answer {
        case fresh(Value)
        case running(Task<Value, Never>)
    }

    private func finished(_ value: Value) {
        state.withLock { state in
            state.running = nil
            state.last = (.now, value)
        }
    }
}
