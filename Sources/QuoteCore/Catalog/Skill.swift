/// A mechanic's skill, and the least a service demands: junior < apprentice < experienced < master.
public enum Skill: Int, Sendable, Hashable, Comparable, CaseIterable, Codable, CustomStringConvertible {
    case junior = 1
    case apprentice = 2
    case experienced = 3
    case master = 4

    /// Reads a skill from its name, ignoring case: `"master"`, `"Junior"`.
    public init?(name: String) {
        // Longer than any skill's name: not compared (a caller's text may be long).
        guard name.utf8.count <= 16, let skill = Skill.allCases.first(where: { $0.name == name.lowercased() }) else {
            return nil
        }
        self = skill
    }

    /// The skill's lower-case name, as it appears in files and on the wire.
    public var name: String {
        switch self {
        case .junior: "junior"
        case .apprentice: "apprentice"
        case .experienced: "experienced"
        case .master: "master"
        }
    }

    public var description: String { name }

    public static func < (lhs: Skill, rhs: Skill) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let skill = Skill(name: name) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "unknown skill \"\(name)\" (junior, apprentice, experienced, master)")
        }
        self = skill
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
