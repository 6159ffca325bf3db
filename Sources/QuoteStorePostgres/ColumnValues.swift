import PostgresNIO

/// One column's values for a batch of rows, bound as a single one-dimensional PostgreSQL
/// array (binary format) that `unnest` turns back into rows: a statement's text is then the
/// same whatever the batch's size, so the server parses and plans it once per connection.
///
/// Each value is written in the array's layout as it is appended, so that binding the column
/// copies one buffer rather than encoding every value again. Unlike postgres-nio's `Array`
/// encoding, a `nil` value is a NULL element.
struct ColumnValues<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable & Sendable>:
    PostgresNonThrowingEncodable,
    Sendable
{
    /// Each element's length (-1: NULL) and bytes, as `array_recv` reads them.
    private var elements = ByteBuffer()
    private(set) var count = 0
    private var hasNull = false

    static var psqlType: PostgresDataType { Element.psqlArrayType }
    static var psqlFormat: PostgresFormat { .binary }

    mutating func append(_ value: Element?) {
        count += 1
        guard let value else { return appendNull() }
        let lengthIndex = elements.writerIndex
        elements.writeInteger(0, as: Int32.self)
        let start = elements.writerIndex
        value.encode(into: &elements, context: .default)
        elements.setInteger(Int32(truncatingIfNeeded: elements.writerIndex - start), at: lengthIndex)
    }

    private mutating func appendNull() {
        hasNull = true
        elements.writeInteger(-1, as: Int32.self)
    }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        // array_recv's layout: dimensions, whether any element is NULL, the element type, then
        // per dimension its length and lower bound, then the elements.
        buffer.writeInteger(count == 0 ? 0 : 1, as: Int32.self)
        buffer.writeInteger(hasNull ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard count > 0 else { return }
        buffer.writeInteger(Int32(truncatingIfNeeded: count))
        buffer.writeInteger(1, as: Int32.self)
        buffer.writeImmutableBuffer(elements)
    }
}

// The types the batch binds, each written in one step: its length, then its bytes.

extension ColumnValues where Element == Int64 {
    mutating func append(_ value: Int64?) {
        count += 1
        guard let value else { return appendNull() }
        elements.writeMultipleIntegers(Int32(8), value)
    }
}

extension ColumnValues where Element == Int32 {
    mutating func append(_ value: Int32?) {
        count += 1
        guard let value else { return appendNull() }
        elements.writeMultipleIntegers(Int32(4), value)
    }
}

extension ColumnValues where Element == String {
    mutating func append(_ value: String?) {
        count += 1
        guard let value else { return appendNull() }
        elements.writeInteger(Int32(truncatingIfNeeded: value.utf8.count))
        elements.writeString(value)
    }
}

extension ColumnValues where Element == ByteBuffer {
    /// Appends `bytes` as a `bytea` element, written straight into the column.
    mutating func append(bytes: [UInt8]) {
        count += 1
        elements.writeInteger(Int32(truncatingIfNeeded: bytes.count))
        elements.writeBytes(bytes)
    }
}
