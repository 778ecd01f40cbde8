/// One `key = value` line of an INI file, with where it came from.
public struct IniEntry: Sendable, Equatable {
  public var section: String
  public var key: String
  public var value: String
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

  public static func parse(_ bytes: [UInt8], file: String) -> (entries: [IniEntry], problems: [ConfigProblem]) {
    var entries: [IniEntry] = []
    var problems: [ConfigProblem] = []
    var section: String?
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
      guard let decoded = String(validating: rawLine, as: UTF8.self) else {
        problem("not valid UTF-8")
        continue
      }
      let text = decoded.trimmed
      if text.isEmpty || text.hasPrefix("#") || text.hasPrefix(";") { continue }
      if text.hasPrefix("[") {
        guard text.hasSuffix("]"), text.count > 2 else {
          problem("malformed section header \(text.quotedForMessage)")
          continue
        }
        let name = String(text.dropFirst().dropLast()).trimmed
        if !seenSections.insert(name).inserted { problem("section [\(name)] appears twice") }
        section = name
        continue
      }
      guard let equals = text.firstIndex(of: "=") else {
        problem("expected 'key = value', found \(text.quotedForMessage)")
        continue
      }
      let key = String(text[..<equals]).trimmed
      var value = String(text[text.index(after: equals)...]).trimmed
      // A trailing comment must be separated by whitespace so that values may contain '#'.
      if let comment = value.range(of: " #") ?? value.range(of: "\t#") {
        value = String(value[..<comment.lowerBound]).trimmed
      }
      guard !key.isEmpty else {
        problem("missing key before '='")
        continue
      }
      guard let section else {
        problem("key '\(key)' appears before any [section]")
        continue
      }
      entries.append(IniEntry(section: section, key: key, value: value, line: lineNumber))
    }
    return (entries, problems)
  }
}

extension StringProtocol {
  /// Without leading and trailing spaces, tabs and carriage returns.
  var trimmed: String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
    guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
    let last = lastIndex(where: { !isSpace($0) })!
    return String(self[first...last])
  }

  /// Short enough to put in a one-line message.
  var quotedForMessage: String {
    let text = count > 40 ? String(prefix(40)) + "..." : String(self)
    return "'\(text)'"
  }

  func range(of needle: String) -> Range<Index>? {
    var index = startIndex
    while index < endIndex {
      if self[index...].hasPrefix(needle) { return index..<self.index(index, offsetBy: needle.count) }
      index = self.index(after: index)
    }
    return nil
  }
}
