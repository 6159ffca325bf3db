import PostgresNIO

/// One column's values for a batch of rows, bound as a single one-dimensional PostgreSQL
/// array (binary format) that `unnest` turns back into rows: a statement's text is then the
/// same whatever the batch's size, so the server parses and plans it once per connection.
///
/// Unlike postgres-nio's `Array` encoding, a `nil` value is a NULL element.
struct ColumnValues<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable & Sendable>:
    PostgresNonThrowingEncodable,
    Sendable
{
    var values: [Element?] = []

    static var psqlType: PostgresDataType { Element.psqlArrayType }
    static var psqlFormat: PostgresFormat { .binary }

    mutating func append(_ value: Element?) { values.append(value) }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        // array_recv's layout: dimensions, whether any element is NULL, the element type, then
        // per dimension its length and lower bound, then each element's length (-1: NULL) and
        // bytes.
        buffer.writeInteger(values.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(values.contains { $0 == nil } ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard !values.isEmpty else { return }
        buffer.writeInteger(Int32(truncatingIfNeeded: values.count))
        buffer.writeInteger(1, as: Int32.self)
        for value in values {
            guard let value else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            let start = buffer.writerIndex
            value.encode(into: &buffer, context: context)
            buffer.setInteger(Int32(truncatingIfNeeded: buffer.writerIndex - start), at: lengthIndex)
        }
    }
}
