/// The traffic a run offers: which workload, from how many clients, with how much in flight,
/// for how long and at what rate. A measured ``Point`` and the ``LoadPlan`` that runs it
/// share it.
struct Traffic: Sendable {
    var workload: Workload
    var clients: Int
    /// Requests in flight per client, closed loop.
    var window: Int
    /// How long `submit` and `mixed` send for (a cap for `contention`).
    var duration: Duration
    /// Book + complete cycles in all, for `contention`.
    var cycles: Int
    /// Total offered requests per second (open loop); `nil`: closed loop, as fast as replies come.
    var rate: Double?
}
