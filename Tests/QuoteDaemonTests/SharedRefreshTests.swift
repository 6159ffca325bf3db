import QuoteMetricsServer
import Synchronization
import Testing

@Suite("A read shared by the HTTP side's requests")
struct SharedRefreshTests {
    @Test("requests that come while a read runs wait for that read, and one still fresh reuses its value")
    func oneReadAtATime() async {
        let reads = Atomic(0)
        let (gate, opener) = AsyncStream<Void>.makeStream()
        let refresh = SharedRefresh(freshFor: .seconds(3_600)) { () async -> Int in
            let number = reads.add(1, ordering: .relaxed).newValue
            for await _ in gate { break }
            return number
        }
        await withTaskGroup(of: Int.self) { group in
            for _ in 0..<50 { group.addTask { await refresh.value() } }
            // The read starts with the first request; it ends only once the gate opens.
            while reads.load(ordering: .relaxed) == 0 { await Task.yield() }
            opener.yield()
            var values: [Int] = []
            for await value in group { values.append(value) }
            #expect(values == Array(repeating: 1, count: 50))
        }
        #expect(await refresh.value() == 1, "fresh: no new read")
        #expect(reads.load(ordering: .relaxed) == 1)
    }

    @Test("a value no longer fresh is read again")
    func staleIsReadAgain() async {
        let reads = Atomic(0)
        let refresh = SharedRefresh(freshFor: .zero) { () async -> Int in
            reads.add(1, ordering: .relaxed).newValue
        }
        #expect(await refresh.value() == 1)
        #expect(await refresh.value() == 2)
        #expect(reads.load(ordering: .relaxed) == 2)
    }
}
