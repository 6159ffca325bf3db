import Foundation
import Testing
import Threads

/// Each test would hang, not fail, if the wake-up were lost: the time limit turns that into a
/// failure.
@Suite("A loop's wake-up call", .timeLimit(.minutes(1)))
struct WakeupTests {
    @Test("a signal sent before the wait is kept, and each wait after it needs a signal of its own")
    func signalBeforeWait() async {
        let wakeup = Wakeup(wakesOnCancel: true)
        wakeup.signal()
        await wakeup.wait()
        let woken = Task {
            await wakeup.wait()
            return true
        }
        wakeup.signal()
        #expect(await woken.value)
    }

    @Test("a waiting loop is woken by a signal from another thread")
    func signalFromAnotherThread() async {
        let wakeup = Wakeup(wakesOnCancel: true)
        let waiting = Task { await wakeup.wait() }
        let thread = Thread { wakeup.signal() }
        thread.start()
        await waiting.value
    }

    @Test("cancelling the waiting task wakes it, when it is to")
    func cancellation() async {
        let wakeup = Wakeup(wakesOnCancel: true)
        let waiting = Task { await wakeup.wait() }
        waiting.cancel()
        await waiting.value
    }
}
