import Foundation
import GRDB
import Testing

@testable import QuoteStoreSQLite

/// Text and blob parameters bound from the store's parameter arena reach the rows exactly,
/// whatever their size, and the room never moves.
@Suite("The SQLite writer's parameter arena")
struct ParameterArenaTests {
    /// Strings from empty to past the arena's room.
    static let sizes = [0, 1, 15, 16, 200, 4_000, 20_000, ParameterArena.bytes / 2 + 1, ParameterArena.bytes + 1]

    static func text(_ size: Int) -> String {
        String(repeating: "é", count: size / 2) + String(repeating: "a", count: size % 2)
    }

    static func blob(_ size: Int, _ round: Int) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ round) })
    }

    @Test(
        "strings and blobs of every size are stored as bound, those past the room too, each statement's apart from the last's"
    )
    func valuesReachTheRows() throws {
        let database = try DatabaseQueue()
        let arena = ParameterArena()
        try database.write { db in
            try db.execute(
                sql: "CREATE TABLE t (n INTEGER, text TEXT NOT NULL, other TEXT NOT NULL, blob BLOB NOT NULL)")
            let insert = try db.cachedStatement(sql: "INSERT INTO t VALUES (?, ?, ?, ?)")
            for round in 0..<2 {
                for size in Self.sizes {
                    try insert.execute(in: arena) {
                        $0.bind(Int64(round * 100_000 + size))
                        $0.bind(Self.text(size))
                        $0.bind("other \(size)")
                        $0.bind(Self.blob(size, round))
                    }
                }
            }
            for round in 0..<2 {
                for size in Self.sizes {
                    let row = try #require(
                        try Row.fetchOne(db, sql: "SELECT * FROM t WHERE n = ?", arguments: [round * 100_000 + size]))
                    #expect(row["text"] as String == Self.text(size))
                    #expect(row["other"] as String == "other \(size)")
                    #expect(row["blob"] as Data == Self.blob(size, round))
                }
            }
        }
    }

    @Test("a statement run while another is being bound has its values copied, and both reach their rows")
    func nestedStatementsKeepTheirValues() throws {
        let database = try DatabaseQueue()
        let arena = ParameterArena()
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t (name TEXT NOT NULL, note TEXT NOT NULL)")
            let outer = try db.makeStatement(sql: "INSERT INTO t VALUES (?, ?)")
            let inner = try db.makeStatement(sql: "INSERT INTO t VALUES (?, ?)")
            try outer.execute(in: arena) { outer in
                outer.bind("outer name")
                try? inner.execute(in: arena) {
                    $0.bind("inner name")
                    $0.bind("inner note")
                }
                outer.bind("outer note")
            }
            let rows = try Row.fetchAll(db, sql: "SELECT name, note FROM t ORDER BY name")
            #expect(
                rows.map { [$0["name"] as String, $0["note"] as String] } == [
                    ["inner name", "inner note"], ["outer name", "outer note"],
                ])
        }
    }

    @Test("the room is lent to one statement at a time, and is always the same room")
    func roomIsLentOnceAndNeverMoves() throws {
        let arena = ParameterArena()
        let first = try #require(arena.begin())
        #expect(first.count == ParameterArena.bytes)
        #expect(arena.begin() == nil, "one statement at a time")
        arena.end()
        let second = try #require(arena.begin())
        #expect(second.baseAddress == first.baseAddress && second.count == first.count)
        arena.end()
    }
}
