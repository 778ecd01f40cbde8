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

  static func setBoolean(_ target: inout Bool, _ value: String) -> String? {
    switch value.lowercased() {
    case "yes", "true", "on", "1": target = true
    case "no", "false", "off", "0": target = false
    default: return "expected yes or no, got \(value.quotedForMessage)"
    }
    return nil
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
