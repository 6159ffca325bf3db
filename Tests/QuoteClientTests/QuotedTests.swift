import Dispatch
import Foundation
import QuoteClient
import Synchronization
import Testing
import ZeroMQ

@Suite("The async client")
struct QuotedTests {
    @Test(
        "a caller cancelled while its request waits behind another's is answered at once, and its request is never sent",
        .timeLimit(.minutes(2)))
    func cancelledWhileQueued() async throws {
        let server = try TestRouter()
        defer { server.stop() }
        let quoted = try Quoted(.init(endpoints: [server.endpoint], timeout: .seconds(5), retries: 0))
        // What a ping came to: `nil` for an answer, or the error's code.
        @Sendable func ping() async -> QuotedError.Code? {
            do throws(QuotedError) {
                _ = try await quoted.ping()
                return nil
            } catch {
                return error.code
            }
        }
        let first = Task { await ping() }
        // The first request is out: the client's one thread waits for its reply. (Awaited, not
        // waited for: a blocked thread of the cooperative pool could hold up the task above.)
        var arrivals = server.arrivals.makeAsyncIterator()
        #expect(await arrivals.next() != nil)
        let second = Task { await ping() }
        second.cancel()
        #expect(await second.value == .cancelled)
        #expect(await first.value == .timedOut)
        #expect(server.requests == 1, "the cancelled request was sent")
    }
}
