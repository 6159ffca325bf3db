import Foundation
import Synchronization
import Testing
import Threads

/// A lost wake-up would hang a test rather than fail it: the time limit turns that into a
/// failure.
@Suite("A thread's job queue", .timeLimit(.minutes(1)))
struct JobQueueTests {
    @Test("jobs pushed from many threads all run on the queue's one thread, each pusher's in its order")
    func ordered() async {
        let queue = JobQueue<(pusher: Int, index: Int)>()
        let seen = Mutex<[(pusher: Int, index: Int, thread: ObjectIdentifier)]>([])
        let done = DispatchSemaphore(value: 0)
        let worker = Thread {
            while let jobs = queue.take() {
                for job in jobs {
                    seen.withLock { $0.append((job.pusher, job.index, ObjectIdentifier(Thread.current))) }
                }
            }
            done.signal()
        }
        worker.start()
        await withTaskGroup(of: Void.self) { group in
            for pusher in 0..<4 {
                group.addTask {
                    for index in 0..<500 { #expect(queue.push((pusher, index))) }
                }
            }
        }
        queue.stop()
        done.wait()
        let all = seen.withLock { $0 }
        #expect(all.count == 2_000)
        #expect(Set(all.map(\.thread)).count == 1)
        for pusher in 0..<4 {
            #expect(all.filter { $0.pusher == pusher }.map(\.index) == Array(0..<500))
        }
    }

    @Test("stopping lets the jobs already pushed run, then take ends and later pushes are refused")
    func stopDrains() {
        let queue = JobQueue<Int>()
        for job in 0..<3 { queue.push(job) }
        queue.stop()
        var ran: [Int] = []
        while let jobs = queue.take() { ran += jobs }
        #expect(ran == [0, 1, 2])
        #expect(!queue.push(3))
        #expect(queue.take() == nil)
    }

    @Test("a queue stopped while its thread waits ends that wait")
    func stopWakesTheWait() {
        let queue = JobQueue<Int>()
        let ended = DispatchSemaphore(value: 0)
        let worker = Thread {
            while queue.take() != nil {}
            ended.signal()
        }
        worker.start()
        queue.stop()
        ended.wait()
        #expect(!queue.push(1))
    }

    @Test("tasks preferring an executor thread run on one thread")
    func executorThread() async {
        let thread = ExecutorThread(name: "test-executor")
        defer { thread.stop(wait: false) }
        var threads = Set<UInt>()
        for _ in 0..<5 {
            threads.insert(await withTaskExecutorPreference(thread) { await Self.currentThread() })
            await Task.yield()
        }
        #expect(threads.count == 1)
    }

    /// The thread this runs on: an async function, which runs on the task's preferred
    /// executor.
    private static func currentThread() async -> UInt { UInt(pthread_self()) }
}
