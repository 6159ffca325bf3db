public import QuoteCore

/// The columns both stores keep of a quote's customer, so that support finds a customer's
/// quotes through an index (`CustomerSearch`), and the conditions on them.
public enum StoredCustomer {
    /// The `customer_email` column of `quote`: its customer's address in search form.
    public static func email(of quote: Quote) -> String {
        CustomerSearch.key(quote.request.customer.email)
    }

    /// The `customer_name` column of `quote`: its customer's name in search form.
    public static func name(of quote: Quote) -> String {
        CustomerSearch.key(quote.request.customer.name)
    }

    /// The least byte string after every text that starts with `prefix`, compared byte by
    /// byte: `prefix`'s UTF-8 with its last byte one higher (never past 0xFF: no byte of UTF-8
    /// is 0xFF). Not UTF-8 itself, so a store compares it as bytes.
    public static func upperBound(ofPrefix prefix: String) -> [UInt8] {
        var bytes = Array(prefix.utf8)
        if let last = bytes.indices.last { bytes[last] += 1 }
        return bytes
    }
}
