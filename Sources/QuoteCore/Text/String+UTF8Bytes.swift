extension String {
    /// Calls `body` with the text's UTF-8 bytes, valid only during the call, without copying
    /// the string.
    ///
    /// `withUTF8` is `mutating`: called on a copy made for it, it costs a retain and a release,
    /// and the writers and checks that read every field of every request call it a few dozen
    /// times a submission. A native string's bytes are contiguous already; any other is copied
    /// once first.
    @inlinable
    public func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self
        return try copy.withUTF8(body)
    }
}
