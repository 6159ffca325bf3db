import Testing

@testable import QuoteStorePostgres

@Suite("How many synchronous standbys a commit needs")
struct ReplicationRequirementTests {
    @Test(
        "synchronous_standby_names says how many standbys must have a commit",
        arguments: [
            ("standby1", 1), ("s1, s2", 1), ("*", 1), ("2 (s1, s2, s3)", 2), ("FIRST 2 (s1, s2)", 2),
            ("first 3 (a,b,c)", 3), ("ANY 2 (s1, s2, s3)", 2), ("any 1 (s1, s2)", 1), ("  ANY  2(s1,s2)", 2),
            ("ANY 0 (s1)", 1), ("FIRSTSTANDBY", 1), ("ANYHOST, other", 1), ("\"2\"", 1), ("12345678 (a)", 1),
        ])
    func standbysRequired(names: String, required: Int) {
        #expect(ReplicationRequirement.standbysRequired(by: names) == required)
    }
}
