import Foundation
import Testing

/// `quotectl top` against a daemon under load: one frame for scripts (`--once`, `--json`),
/// and the live view on a real terminal (tmux).
@Suite("quotectl top", .serialized, .timeLimit(.minutes(3)))
struct TopTests {
    /// A daemon and clients submitting, booking and completing until the test ends.
    final class Loaded {
        let daemon: DaemonProcess
        let clients: [LoadClient]

        init() throws {
            let daemon = try DaemonProcess()
            let progress = DispatchSemaphore(value: 0)
            let clients = (0..<4).map {
                LoadClient(index: $0, endpoints: [daemon.commands], until: .now + .seconds(600), progress: progress)
            }
            self.daemon = daemon
            self.clients = clients
            for client in clients { client.start() }
            _ = waitFor(progress) { clients.map(\.acknowledgedCount).reduce(0, +) >= 20 }
        }

        func stop() {
            for client in clients { client.finish() }
            for client in clients { client.join() }
            daemon.stop()
        }
    }

    @Test("top --once prints one frame with the submission rate, latency, quotes and events")
    func onceFrame() throws {
        let loaded = try Loaded()
        defer { loaded.stop() }
        let result = try Quotectl.run(["top", "--once"], environment: Quotectl.environment(loaded.daemon))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("quoted top  \(loaded.daemon.commands)") == true, "\(result.stdout)")
        #expect(!result.stdout.contains("\u{1B}["), "no escapes off a terminal")
        let submit = try #require(lines.first { $0.hasPrefix("submit ") }, "\(result.stdout)")
        let columns = submit.split(separator: " ", omittingEmptySubsequences: true)
        #expect((Double(columns[1]) ?? 0) > 0, "a submission rate: \(submit)")
        #expect(submit.contains(" ms"), "percentiles in milliseconds: \(submit)")
        let total = try #require(lines.first { $0.hasPrefix("total ") })
        #expect((Double(total.split(separator: " ")[1]) ?? 0) > 0)
        for heading in ["OPERATION", "ERRORS", "QUOTES", "MECHANICS", "WAITING", "EVENTS"] {
            #expect(lines.contains { $0.hasPrefix(heading) }, "\(heading) in \(result.stdout)")
        }
        let events = try #require(lines.first { $0.hasPrefix("EVENTS") })
        #expect(!events.hasPrefix("EVENTS     0.0/s"), "events flow: \(events)")
    }

    @Test("top --once --json prints one object with rates, percentiles and the store's state")
    func onceJSON() throws {
        let loaded = try Loaded()
        defer { loaded.stop() }
        let result = try Quotectl.run(["top", "--once", "--json"], environment: Quotectl.environment(loaded.daemon))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect((object["requestsPerSecond"] as? Double ?? 0) > 0)
        #expect((object["eventsPerSecond"] as? Double ?? 0) > 0)
        #expect((object["lastSeq"] as? Int ?? 0) > 0)
        let operations = try #require(object["operations"] as? [[String: Any]])
        let submit = try #require(operations.first { $0["op"] as? String == "submit" })
        #expect((submit["perSecond"] as? Double ?? 0) > 0)
        let p50 = try #require(submit["p50Milliseconds"] as? Double)
        let p99 = try #require(submit["p99Milliseconds"] as? Double)
        #expect(p50 > 0 && p50 <= p99)
        let quotes = try #require(object["quotes"] as? [String: Int])
        #expect(quotes.values.reduce(0, +) > 0)
        #expect(object["mechanicsBusy"] is Int && object["mechanicsFree"] is Int)
    }

    @Test("top on a real terminal: rates that change between refreshes, a clean redraw on resize, q quits")
    func liveInTmux() throws {
        let loaded = try Loaded()
        defer { loaded.stop() }
        let tmux = try Tmux()
        defer { tmux.kill() }
        let ctl = Binaries.path("quotectl")
        let env = "QUOTED_ENDPOINT=\(loaded.daemon.commands)"
        _ = try tmux.run(["new-session", "-d", "-s", "top", "-x", "120", "-y", "30", "env \(env) \(ctl) top"])
        _ = try tmux.run(["set-option", "-t", "top", "remain-on-exit", "on"])

        func totalRate(_ screen: String) -> Double? {
            screen.split(separator: "\n").first { $0.hasPrefix("total ") }
                .flatMap { Double($0.split(separator: " ")[1]) }
        }
        let first = try #require(tmux.waitFor(pane: "top:0.0") { (totalRate($0) ?? 0) > 0 }, "a first frame")
        let firstRate = try #require(totalRate(first))
        let second = try #require(
            tmux.waitFor(pane: "top:0.0") { screen in totalRate(screen).map { $0 > 0 && $0 != firstRate } ?? false },
            "the rates change between refreshes")
        #expect(second.contains("QUOTES"))
        let coloured = try tmux.capture(pane: "top:0.0", escapes: true)
        #expect(coloured.contains("\u{1B}["), "colour on a terminal")

        // Resized, narrower then wider: the title is laid out again for the new width, its
        // clock at the right edge, and drawn once.
        for width in [100, 150] {
            _ = try tmux.run(["resize-window", "-t", "top", "-x", "\(width)", "-y", "30"])
            let redrawn = try #require(
                tmux.waitFor(pane: "top:0.0") { screen in
                    let title = screen.split(separator: "\n").first.map(String.init) ?? ""
                    return title.count == width
                        && title.range(of: #"\d\d:\d\d:\d\d$"#, options: .regularExpression) != nil
                        && screen.contains("QUOTES")
                }, "a redraw at \(width) columns")
            #expect(redrawn.components(separatedBy: "quoted top").count == 2, "one title: \(redrawn)")
        }

        _ = try tmux.run(["send-keys", "-t", "top:0.0", "q"])
        // The pane is dead once top has exited and closed the terminal; tmux gives the exit
        // status when it has reaped it (a signal would leave it empty and name the signal).
        var state = ""
        let dead = tmux.waitFor(pane: "top:0.0") { _ in
            state =
                (try? tmux.run([
                    "display-message", "-p", "-t", "top:0.0", "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}",
                ])) ?? ""
            return state.hasPrefix("1:")
        }
        #expect(dead != nil, "q ends top: \(state)")
        let fields = state.trimmingCharacters(in: .whitespacesAndNewlines).split(
            separator: ":", omittingEmptySubsequences: false)
        #expect(
            fields.count == 3 && (fields[1] == "0" || fields[1].isEmpty) && fields[2].isEmpty,
            "ended by q, not by a signal: \(state)")
        let after = try tmux.capture(pane: "top:0.0", escapes: false)
        #expect(!after.contains("OPERATION"), "the screen is given back: \(after)")
    }

    @Test("With NO_COLOR, top draws without colour on a terminal")
    func noColour() throws {
        let loaded = try Loaded()
        defer { loaded.stop() }
        let tmux = try Tmux()
        defer { tmux.kill() }
        let ctl = Binaries.path("quotectl")
        let env = "NO_COLOR=1 QUOTED_ENDPOINT=\(loaded.daemon.commands)"
        _ = try tmux.run(["new-session", "-d", "-s", "plain", "-x", "120", "-y", "30", "env \(env) \(ctl) top"])
        _ = try #require(tmux.waitFor(pane: "plain:0.0") { $0.contains("QUOTES") })
        let screen = try tmux.capture(pane: "plain:0.0", escapes: true)
        #expect(!screen.contains("\u{1B}["), "no colour or attributes: \(screen)")
    }
}
