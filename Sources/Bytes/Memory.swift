#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The C allocator, for ``ByteOutput``'s buffer. `UnsafeMutablePointer.allocate` asks the
/// runtime for its default alignment, which glibc serves through `posix_memalign`, at twice
/// the cost of `malloc`; and `realloc` often grows a buffer in place, where allocating anew
/// always copies it.
@usableFromInline enum Memory {
    /// `count` bytes, uninitialized. Out of memory, it traps, as every Swift allocation does.
    @usableFromInline static func allocate(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        guard let memory = malloc(count) else { return .allocate(capacity: count) }
        return memory.assumingMemoryBound(to: UInt8.self)
    }

    /// `memory` grown to `count` bytes, its first `kept` bytes kept; `memory` is no longer valid.
    @usableFromInline static func reallocate(
        _ memory: UnsafeMutablePointer<UInt8>, to count: Int, keeping kept: Int
    ) -> UnsafeMutablePointer<UInt8> {
        if let grown = realloc(memory, count) { return grown.assumingMemoryBound(to: UInt8.self) }
        // realloc failed and left `memory` as it was: take new memory (or trap), copy, free.
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
        grown.initialize(from: memory, count: kept)
        free(memory)
        return grown
    }

    /// Frees what ``allocate(_:)`` or ``reallocate(_:to:keeping:)`` returned.
    @usableFromInline static func free(_ memory: UnsafeMutablePointer<UInt8>) {
        #if canImport(Glibc)
            Glibc.free(memory)
        #else
            Darwin.free(memory)
        #endif
    }
}
