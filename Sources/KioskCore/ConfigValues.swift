/// The value parsers of the schema: each stores a well-formed value in `target` and returns nil, or leaves
/// `target` alone and returns what is wrong, which the parser reports as `FILE:LINE: section.key: message`.
extension Config {
  static func setInteger(_ target: inout Int, _ value: String, in range: ClosedRange<Int>) -> String? {
    guard let number = Int(value) else { return "expected a whole number, got \(value.quotedForMessage)" }
    guard range.contains(number) else { return "\(number) is out of range \(range.lowerBound)...\(range.upperBound)" }
    target = number
    return nil
  }

  /// A zoom factor written as 2, 2.5 or 0.25 (at most two decimals), kept in hundredths.
  static func setZoomFactor(_ target: inout Int, _ value: String, in range: ClosedRange<Int>) -> String? {
    let parts = value.split(separator: ".", omittingEmptySubsequences: false)
    let fraction = parts.count == 2 ? String(parts[1]) : ""
    guard parts.count <= 2, let whole = Int(parts[0]), whole >= 0, fraction.count <= 2,
      fraction.allSatisfy({ $0.isASCII && $0.isNumber }), parts.count == 1 || !fraction.isEmpty
    else { return "expected a factor such as 2 or 2.5, got \(value.quotedForMessage)" }
    let hundredths = whole * 100 + (Int(fraction.count == 1 ? fraction + "0" : fraction) ?? 0)
    guard range.contains(hundredths) else {
      func factor(_ h: Int) -> String { h % 100 == 0 ? "\(h / 100).0" : "\(h / 100).\(h % 100 < 10 ? "0" : "")\(h % 100)" }
      return "\(value) is out of range \(factor(range.lowerBound))...\(factor(range.upperBound))"
    }
    target = hundredths
    return nil
  }

  static func setDuration(_ target: inout Duration, _ value: String, unit: Duration, in range: ClosedRange<Int>)
    -> String?
  {
    var count = 0
    if let message = setInteger(&count, value, in: range) { return message }
    target = unit * count
    return nil
  }

  /// A value that must be one of a fixed set of words, each standing for one value: the one parser of every
  /// such key, so that all of them read and complain alike. `expected` is how the message lists the words;
  /// `spelling` is applied to the words and to the value before they are compared (lowercasing, say).
  static func setChoice<Value>(
    _ target: inout Value, _ value: String, words: [(word: String, value: Value)], expected: String,
    spelling: (String) -> String = { $0 }
  ) -> String? {
    let written = spelling(value)
    guard let chosen = words.first(where: { spelling($0.word) == written }) else {
      return "expected \(expected), got \(value.quotedForMessage)"
    }
    target = chosen.value
    return nil
  }

  /// An enumeration whose raw values are its words, listed in declaration order as "one of a, b, c".
  static func setChoice<Value: CaseIterable & RawRepresentable>(
    _ target: inout Value, _ value: String, ignoringCase: Bool
  ) -> String? where Value.RawValue == String {
    let words = Value.allCases.map { (word: $0.rawValue, value: $0) }
    let expected = "one of " + words.map(\.word).joined(separator: ", ")
    let spelling: (String) -> String = ignoringCase ? { $0.lowercased() } : { $0 }
    return setChoice(&target, value, words: words, expected: expected, spelling: spelling)
  }

  static let yesOrNo: [(word: String, value: Bool)] = [
    ("yes", true), ("true", true), ("on", true), ("1", true),
    ("no", false), ("false", false), ("off", false), ("0", false),
  ]

  static func setBoolean(_ target: inout Bool, _ value: String) -> String? {
    setChoice(&target, value, words: yesOrNo, expected: "yes or no", spelling: { $0.lowercased() })
  }

  static let quarterTurns: [(word: String, value: Int)] = [("0", 0), ("90", 90), ("180", 180), ("270", 270)]

  /// Degrees clockwise, a quarter turn at a time.
  static func setQuarterTurn(_ target: inout Int, _ value: String) -> String? {
    // Read as a number, as it always was: "+90" and "090" are 90.
    setChoice(
      &target, value, words: quarterTurns, expected: "0, 90, 180 or 270", spelling: { Int($0).map(String.init) ?? $0 })
  }

  static func setPath(_ target: inout String, _ value: String, keywords: [String]) -> String? {
    if keywords.contains(value) || value.hasPrefix("/") {
      target = value
      return nil
    }
    let choices = (keywords + ["an absolute path"]).joined(separator: ", ")
    return "expected \(choices), got \(value.quotedForMessage)"
  }

  static func setCapabilities(_ target: inout [Capability], _ value: String) -> String? {
    if value == "none" {
      target = []
      return nil
    }
    let names = value.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
    guard !names.isEmpty else { return "expected capability names separated by commas, or none" }
    var list: [Capability] = []
    for name in names {
      guard let capability = Capability(rawValue: String(name)) else {
        return "unknown capability \(name.quotedForMessage) (known: \(Capability.known))"
      }
      guard !list.contains(capability) else { return "'\(capability)' listed twice" }
      list.append(capability)
    }
    target = list
    return nil
  }

  static func setLine(_ target: inout LineReference?, _ value: String) -> String? {
    if value == "none" {
      target = nil
      return nil
    }
    guard !value.isEmpty, !value.hasPrefix("-") else { return "expected a line offset, a line name, or none" }
    target = LineReference(parsing: value)
    return nil
  }
}
