import QuoteStore
import Testing

@testable import QuoteStorePostgres

/// The wait for a pooled connection (`withConnection`): one answer whoever comes first, the
/// body's result, the lease's failure or the deadline; a body that nobody waits for any more
/// never runs. A plain object stands for the connection.
@Suite("The PostgreSQL store's lease gate")
struct LeaseGateTests {
    final class Connection: Sendable {}

    typealias Gate = LeaseGate<Int, Connection>

    /// Opens `gate`, runs `steps` against it, and returns the one answer the waiter got.
    private static func answer(_ gate: Gate, _ steps: @Sendable (Gate) -> Void) async -> Result<Int, StoreError> {
        await withCheckedContinuation { continuation in
            gate.open(continuation)
            steps(gate)
        }
    }

    @Test("a body that runs and finishes answers with its result, and a later deadline changes nothing")
    func finishedBodyAnswers() async throws {
        let gate = Gate()
        let connection = Connection()
        let result = await Self.answer(gate) { gate in
            #expect(gate.start(on: connection))
            guard case .running(let leased, _) = gate.phase else {
                Issue.record("a started body is running, it is \(gate.phase)")
                return
            }
            #expect(leased === connection)
            gate.finish(.success(42))
            #expect(!gate.abandon(StoreError(.unavailable, "too late")))
        }
        #expect(try result.get() == 42)
        guard case .done = gate.phase else {
            Issue.record("an answered gate is done, it is \(gate.phase)")
            return
        }
    }

    @Test("a deadline before the lease answers with its error, and the lease that comes after never runs the body")
    func deadlineBeforeLease() async {
        let gate = Gate()
        let result = await Self.answer(gate) { gate in
            guard case .waiting = gate.phase else {
                Issue.record("an open gate waits, it is \(gate.phase)")
                return
            }
            #expect(gate.abandon(StoreError(.unavailable, "no connection within 30 seconds")))
            #expect(!gate.start(on: Connection()))
        }
        #expect(throws: StoreError.self) { try result.get() }
        #expect((try? result.get()) == nil)
        if case .failure(let error) = result { #expect(error.code == .unavailable) }
    }

    @Test("a connection lost while the body runs answers once with the loss; the body's late result is dropped")
    func lossWhileRunning() async {
        let gate = Gate()
        let result = await Self.answer(gate) { gate in
            #expect(gate.start(on: Connection()))
            #expect(gate.abandon(StoreError(.unavailable, "PostgreSQL: the connection was lost")))
            // The body's own answer arrives after: the waiter has been answered, once.
            gate.finish(.success(7))
            #expect(!gate.abandon(StoreError(.database, "again")))
        }
        guard case .failure(let error) = result else {
            Issue.record("the loss answers first, got \(result)")
            return
        }
        #expect(error.code == .unavailable)
        #expect(error.message.contains("lost"))
    }

    @Test("a lease that fails answers with its failure")
    func failedLease() async {
        let gate = Gate()
        let result = await Self.answer(gate) { gate in
            gate.finish(.failure(StoreError(.busy, "PostgreSQL: deadlock detected (SQLSTATE 40P01)")))
        }
        guard case .failure(let error) = result else {
            Issue.record("the lease's failure answers, got \(result)")
            return
        }
        #expect(error.code == .busy)
    }
}
