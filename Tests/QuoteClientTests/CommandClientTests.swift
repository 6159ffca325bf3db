import QuoteClient
import QuoteWire
import Testing
import ZeroMQ

@Suite("The command client")
struct CommandClientTests {
    @Test(
        "a request to daemons that are all down fails by its deadline: with several endpoints nothing can queue it, and the send must not block for good",
        .timeLimit(.minutes(1)))
    func allDaemonsDown() throws {
        let context = try Context()
        // Nothing listens on these: every connection is refused, and none completes.
        let client = try CommandClient(
            context: context, endpoint: "tcp://127.0.0.1:1,tcp://127.0.0.1:2", timeout: .milliseconds(300))
        let error = try #require(throws: QuotedError.self) { try client.call(.ping) }
        #expect(error.code == .timedOut, "\(error)")
    }
}
