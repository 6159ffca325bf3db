import Bytes

/// The buffer a codec's writers write into, lent to one at a time and kept for the next:
/// every frame is copied out of it (`JSONWriter.bytes`), so a frame needs no buffer of its
/// own, allocated and freed. Not thread-safe: one per ``WireCodec``, one codec per thread.
final class WriterBuffer {
    /// The buffer between two writers; `nil` while one has it.
    @exclusivity(unchecked) private var kept: ByteOutput?

    /// The most room kept between writers: a buffer grown past it for a large page is freed.
    static let keptCapacity = 65_536

    init() {}

    /// An empty buffer with room for `capacity` bytes: the kept one, or a new one if a writer
    /// has it already (one writing while another does).
    func take(capacity: Int) -> ByteOutput {
        guard var output = kept.take() else { return ByteOutput(capacity: capacity) }
        output.removeAll(keepingCapacity: capacity)
        return output
    }

    /// Keeps `output` for the next writer, unless it grew too large to keep.
    func giveBack(_ output: consuming ByteOutput) {
        guard output.reservedCapacity <= Self.keptCapacity else { return }
        kept = consume output
    }
}
