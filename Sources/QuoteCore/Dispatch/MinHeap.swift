/// A binary min-heap: O(1) top, O(log n) push and pop, O(n) build.
struct MinHeap<Element: Comparable & Sendable>: Sendable {
    private var storage: [Element]

    init() { storage = [] }

    init(_ elements: [Element]) {
        storage = elements
        var index = storage.count / 2 - 1
        while index >= 0 {
            siftDown(index)
            index -= 1
        }
    }

    var count: Int { storage.count }
    var top: Element? { storage.first }

    mutating func push(_ element: Element) {
        storage.append(element)
        var child = storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard storage[child] < storage[parent] else { break }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func pop() -> Element? {
        guard !storage.isEmpty else { return nil }
        storage.swapAt(0, storage.count - 1)
        let element = storage.removeLast()
        siftDown(0)
        return element
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < storage.count && storage[left] < storage[smallest] { smallest = left }
            if right < storage.count && storage[right] < storage[smallest] { smallest = right }
            if smallest == parent { return }
            storage.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
