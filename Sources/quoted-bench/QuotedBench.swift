import ArgumentParser

/// `quoted-bench`: measures quoted and its parts on this machine, end to end.
@main
struct QuotedBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quoted-bench",
        abstract: "Benchmarks for quoted and its building blocks.",
        subcommands: [
            LoadBench.self, ZeroMQEcho.self, StoreBench.self, StagesBench.self, CodecBench.self, CrashWriter.self,
        ]
    )
}
