/// One `key = value` line of an INI file, with where it came from.
public struct IniEntry: Sendable, Equatable {
  public var section: String
  public var key: String
  public var value: String
  public var line: Int
}

/// A `[section]` header and its line.
public struct IniSection: Sendable, Equatable {
  public var name: String
  public var line: Int
}

/// A problem in a configuration file, reported as `FILE:LINE: message`.
public struct ConfigProblem: Error, Sendable, Equatable, CustomStringConvertible {
  public var file: String
  public var line: Int
  public var message: String
  public init(file: String, line: Int, message: String) {
    self.file = file
    self.line = line
    self.message = message
  }
  public var description: String { line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)" }
}

/// A tolerant reader of INI syntax: `[section]`, `key = value`, `#` or `;` comments.
///
/// It never stops at the first problem: every malformed line is reported, and the well-formed ones are kept.
public enum IniFile {
  public static let maximumLineLength = 4096

  public static func parse(_ bytes: [UInt8], file: String) -> (
    entries: [IniEntry], sections: [IniSection], problems: [ConfigProblem]
  ) {
    var entries: [IniEntry] = []
    var sections: [IniSection] = []
    var problems: [ConfigProblem] = []
    var section: String?
    var inMalformedSection = false
    var seenSections: Set<String> = []
    var lineNumber = 0
    for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
      lineNumber += 1
      func problem(_ message: String) { problems.append(ConfigProblem(file: file, line: lineNumber, message: message)) }
      if rawLine.count > maximumLineLength {
        problem("line longer than \(maximumLineLength) bytes")
        continue
      }
      if rawLine.contains(0) {
        problem("NUL byte in line")
        continue
      }
      guard String(validating: rawLine, as: UTF8.self) != nil else {
        problem("not valid UTF-8")
        continue
      }
      // Bytes, not Characters, from here on: the structure is ASCII, and a 4 KiB line stays cheap to take apart.
      let line = rawLine.trimmedSpace
      if line.isEmpty || line.first == UInt8(ascii: "#") || line.first == UInt8(ascii: ";") { continue }
      if line.first == UInt8(ascii: "[") {
        guard line.last == UInt8(ascii: "]"), line.count > 2 else {
          problem("malformed section header \(String(decoding: line, as: UTF8.self).quotedForMessage)")
          // Its keys belong to no section we know; reporting each would only repeat this line's news.
          section = nil
          inMalformedSection = true
          continue
        }
        let name = String(decoding: line.dropFirst().dropLast().trimmedSpace, as: UTF8.self)
        if !seenSections.insert(name).inserted { problem("section [\(name)] appears twice") }
        sections.append(IniSection(name: name, line: lineNumber))
        section = name
        inMalformedSection = false
        continue
      }
      guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else {
        problem("expected 'key = value', found \(String(decoding: line, as: UTF8.self).quotedForMessage)")
        continue
      }
      let key = String(decoding: line[..<equals].trimmedSpace, as: UTF8.self)
      var valueBytes = line[(equals + 1)...].trimmedSpace
      // A trailing comment must be separated by whitespace so that values may contain '#'.
      var searchFrom = valueBytes.startIndex
      while let hash = valueBytes[searchFrom...].firstIndex(of: UInt8(ascii: "#")) {
        if hash > valueBytes.startIndex, valueBytes[hash - 1] == 0x20 || valueBytes[hash - 1] == 0x09 {
          valueBytes = valueBytes[..<hash].trimmedSpace
          break
        }
        searchFrom = hash + 1
      }
      let value = String(decoding: valueBytes, as: UTF8.self)
      guard !key.isEmpty else {
        problem("missing key before '='")
        continue
      }
      guard let section else {
        if inMalformedSection { continue }
        problem("key '\(key)' appears before any [section]")
        continue
      }
      entries.append(IniEntry(section: section, key: key, value: value, line: lineNumber))
    }
    return (entries, sections, problems)
  }
}

extension ArraySlice<UInt8> {
  /// Without leading and trailing spaces, tabs and carriage returns.
  var trimmedSpace: ArraySlice<UInt8> {
    let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
      return self[startIndex..<startIndex]
    }
    return self[first...last]
  }
}

extension StringProtocol {
  /// Short enough to put in a one-line message.
  var quotedForMessage: String {
    let text = count > 40 ? String(prefix(40)) + "..." : String(self)
    return "'\(text)'"
  }
}
