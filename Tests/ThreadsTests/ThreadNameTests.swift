import Foundation
import Testing
import Threads

@Suite("A thread's name, as the kernel shows it", .timeLimit(.minutes(1)))
struct ThreadNameTests {
    @Test(
        "is its name, cut to 15 bytes and never inside a character",
        arguments: [
            ("quoted-io", "quoted-io"),
            ("quoted-sqlite-writer", "quoted-sqlite-w"),
            ("quoted-é-écrivain", "quoted-é-écri"),
            ("quoted-writer-é", "quoted-writer-"),
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
}
