import Foundation
import Testing
import Threads

@Suite("A thread's name, as the kernel shows it", .timeLimit(.minutes(1)))
struct ThreadNameTests {
    @Test(
        "is its name, cut to 15 bytes between characters, control characters shown as _",
        arguments: [
            ("quoted-io", "quoted-io"),
            ("quoted-sqlite-writer", "quoted-sqlite-w"),
            ("quoted-é-écrivain", "quoted-é-écri"),
            ("quoted-writer-é", "quoted-writer-"),
            ("quoted-writer-e\u{301}", "quoted-writer-"),
            ("quoted\nio\t", "quoted_io_"),
        ])
    func kernelName(name: String, shown: String) async {
        let seen = await withCheckedContinuation { (seen: CheckedContinuation<String, Never>) in
            Thread(named: name) {
                let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                seen.resume(returning: comm)
            }.start()
        }
        #expect(seen == shown + "\n")
    }

    @Test("an empty name leaves the name the thread was born with")
    func emptyName() async {
        let (inherited, seen) = await withCheckedContinuation { (seen: CheckedContinuation<(String, String), Never>) in
            // Read on the thread that starts the new one, whose name it inherits.
            let inherited = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
            Thread(named: "") {
                seen.resume(
                    returning: (
                        inherited, (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                    ))
            }.start()
        }
        #expect(seen == inherited)
    }
}
