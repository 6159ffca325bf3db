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

    @Test(
        "statements run while another is being bound have their values copied, empty ones too, and all reach their rows"
    )
    func nestedStatementsKeepTheirValues() throws {
        let database = try DatabaseQueue()
        let arena = ParameterArena()
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t (name TEXT NOT NULL, note TEXT NOT NULL, blob BLOB NOT NULL)")
            let outer = try db.makeStatement(sql: "INSERT INTO t VALUES (?, ?, ?)")
            let inner = try db.makeStatement(sql: "INSERT INTO t VALUES (?, ?, ?)")
            try outer.execute(in: arena) { outer in
                outer.bind("outer name")
                // Twice, the second time as long as the outer name: neither may land on it.
                for (name, note, blob) in [("inner name", "", Data()), ("OUTER NAME", "x", Data([1]))] {
                    try? inner.execute(in: arena) {
                        $0.bind(name)
                        $0.bind(note)
                        $0.bind(blob)
                    }
                }
                outer.bind("outer note")
                outer.bind(Data([2, 3]))
            }
            let rows = try Row.fetchAll(db, sql: "SELECT name, note, blob FROM t ORDER BY rowid")
            #expect(rows.map { $0["name"] as String } == ["inner name", "OUTER NAME", "outer name"])
            #expect(rows.map { $0["note"] as String } == ["", "x", "outer note"])
            #expect(
                rows.map { $0["blob"] as Data? } == [Data(), Data([1]), Data([2, 3])], "an empty blob is X'', not NULL")
        }
    }

    @Test("a statement's values stay its own while another statement uses the room between its runs")
    func statementsTakeTurns() throws {
        let database = try DatabaseQueue()
        let arena = ParameterArena()
        try database.write { db in
            try db.execute(sql: "CREATE TABLE a (v TEXT NOT NULL); CREATE TABLE b (v TEXT NOT NULL)")
            let first = try db.makeStatement(sql: "INSERT INTO a VALUES (?)")
            let second = try db.makeStatement(sql: "INSERT INTO b VALUES (?)")
            try first.execute(in: arena) { $0.bind("a one") }
            try second.execute(in: arena) { $0.bind("b one") }
            try first.execute(in: arena) { $0.bind("a two") }
            #expect(try String.fetchAll(db, sql: "SELECT v FROM a ORDER BY rowid") == ["a one", "a two"])
            #expect(try String.fetchAll(db, sql: "SELECT v FROM b") == ["b one"])
        }
    }

    @Test("values that fill the room exactly are bound from it, and an empty one after them is not NULL")
    func valuesFillingTheRoom() throws {
        let database = try DatabaseQueue()
        let arena = ParameterArena()
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t (x BLOB NOT NULL, y BLOB NOT NULL, z BLOB)")
            let insert = try db.makeStatement(sql: "INSERT INTO t VALUES (?, ?, ?)")
            let half = ParameterArena.bytes / 2
            try insert.execute(in: arena) {
                $0.bind(Data(repeating: 1, count: half))
                $0.bind(Data(repeating: 2, count: ParameterArena.bytes - half))
                $0.bind(Data())
            }
            let row = try #require(try Row.fetchOne(db, sql: "SELECT x, y, z FROM t"))
            #expect(row["x"] as Data == Data(repeating: 1, count: half))
            #expect(row["y"] as Data == Data(repeating: 2, count: ParameterArena.bytes - half))
            #expect(row["z"] as Data? == Data())
        }
    }

    @Test("the room is lent while a statement's rows are read, and given back when a statement fails")
    func roomIsLentThroughTheStepAndGivenBack() throws {
        let database = try DatabaseQueue()
        let arena = ParameterArena()
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t (v TEXT NOT NULL)")
            let select = try db.makeStatement(sql: "SELECT ? || 'x'")
            let read = try select.fetchFirst(in: arena, binding: { $0.bind("w") }) { columns in
                #expect(arena.begin() == nil, "lent while the row is read")
                return columns.string(0)
            }
            #expect(read == "wx")
            let insert = try db.makeStatement(sql: "INSERT INTO t VALUES (?)")
            #expect(throws: (any Error).self) { try insert.execute(in: arena) { _ in } }
            #expect(throws: (any Error).self) { try insert.execute(in: arena) { $0.bindNull() } }
            let room = arena.begin()
            #expect(room != nil, "given back after a wrong parameter count and a failed step")
            arena.end()
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
