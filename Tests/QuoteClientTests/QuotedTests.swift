import QuoteClient
import Testing

@Suite("The async client")
struct QuotedTests {
    @Test(
        "callers queued behind one another on one client each wait no longer than their own attempts take, with quoted down"
    )
    func queuedCallersKeepTheirDeadlines() async throws {
        // Nothing listens there: every attempt goes unanswered for its whole timeout.
        let quoted = try Quoted(.init(endpoints: ["tcp://127.0.0.1:1"], timeout: .milliseconds(300), retries: 0))
        let clock = ContinuousClock()
        let started = clock.now
        let outcomes = await withTaskGroup(of: (QuotedError.Code?, Duration).self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do throws(QuotedError) {
                        _ = try await quoted.ping()
                        return (nil, clock.now - started)
                    } catch {
                        return (error.code, clock.now - started)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.allSatisfy { $0.0 == .timedOut })
        // One after another, the tenth would wait three seconds; each is owed 0.3 s.
        let longest = outcomes.map(\.1).max() ?? .zero
        #expect(longest < .milliseconds(1_500), "the last caller waited \(longest)")
    }
}
