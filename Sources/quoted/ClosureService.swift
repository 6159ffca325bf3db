import ServiceLifecycle

/// Work that runs as one service of a group, such as start-up followed by a group of its own:
/// it sees the group's graceful shutdown through the task it runs in.
struct ClosureService: Service {
    let body: @Sendable () async throws -> Void

    init(_ body: @escaping @Sendable () async throws -> Void) {
        self.body = body
    }

    func run() async throws {
        try await body()
    }
}
