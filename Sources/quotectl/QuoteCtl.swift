import ArgumentParser
import KeyCommands

#if canImport(Glibc)
    import Glibc
#endif

/// `quotectl`: submit, inspect, resolve, book and watch quotes on a running quoted.
@main
struct QuoteCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quotectl",
        abstract: "Control and watch quoted, the quote-dispatch daemon.",
        discussion: """
            Exit status: 0 success; 1 quoted refused the request (validation, illegal transition, busy \
            mechanic...); 64 usage error; 69 quoted unreachable; 70 internal error.
            Endpoints default to QUOTED_ENDPOINT and QUOTED_EVENTS, else tcp://127.0.0.1:5555 and :5556.
            """,
        subcommands: [
            Submit.self, Get.self, List.self, Resolve.self, Book.self, Complete.self, Cancel.self, Reassign.self,
            Mechanics.self, MechanicCommand.self, Services.self, CatalogCommand.self, Stats.self, Top.self, Ping.self,
            Watch.self,
            Waiting.self, Keygen.self,
        ]
    )

    /// Starts with every signal unblocked (a parent's blocked mask is inherited through exec,
    /// which would make `kill` and Ctrl-C ignore a watcher), then runs the command.
    static func main() async {
        var all = sigset_t()
        sigfillset(&all)
        sigprocmask(SIG_UNBLOCK, &all, nil)
        await main(nil)
    }
}
