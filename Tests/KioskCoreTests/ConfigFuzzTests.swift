#if canImport(Glibc)
  import Glibc
#endif
import Testing

@testable import KioskCore

/// SplitMix64: a tiny generator whose sequence depends only on its seed, so every run parses the same inputs.
struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Inputs that try to break the parser: random bytes, long lines, NULs, invalid UTF-8, huge numbers, and
/// mutations of the shipped file, which reach deep into the schema's value parsers.
struct ConfigFuzzer {
  var random: SeededGenerator
  let shipped: [UInt8]
  let shippedLines: [[UInt8]]

  init(seed: UInt64, shipped: [UInt8]) {
    random = SeededGenerator(seed: seed)
    self.shipped = shipped
    shippedLines = shipped.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
  }

  static let invalidUTF8: [[UInt8]] = [
    [0xFF], [0xC3, 0x28], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC0, 0xAF], [0x80],
  ]
  static let values: [String] = [
    "", "none", "auto", "yes", "0", "-0", "+5", "-1", "0x10", "1e9", "9.5", "99999999999999999999999999",
    "9223372036854775807", "9223372036854775808", "-9223372036854775809", "640x360", "0x0", "x", "16384x16384",
    "99999999999999999999x1", "/", "/dev/video0", "label:", "label:A", "uuid:../x", "still-camera, still-camera",
    "display,,camera-roll", "é", "\u{301}", "👍🏽", "[", "]", "=", " # ", "\t#", "\r", "a=b=c", "mount-point",
  ]
  static let sections = ["camera", "display", "buttons", "capture", "movie", "roll", "capabilities", "", " x "]
  static let keys = [
    "device", "format", "size", "frame-rate", "missing-message-seconds", "chip", "shutter", "mode", "active-low",
    "bias", "debounce-ms", "jpeg-quality", "path", "folder-suffix", "reserve-mb", "mount", "required", "optional",
  ]

  mutating func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &random) }
  mutating func byte() -> UInt8 { UInt8.random(in: 0...255, using: &random) }
  mutating func pick<T>(_ choices: [T]) -> T { choices[int(0..<choices.count)] }

  mutating func next(_ index: Int) -> [UInt8] {
    // Long lines cost a hundred times more to parse than the rest; one in 32 keeps the test quick.
    if index % 32 == 0 { return longLines() }
    switch index % 7 {
    case 0: return randomBytes(int(0..<256))
    case 1: return tokens()
    case 2, 3: return mutatedShippedFile()
    case 4: return schemaShaped()
    case 5: return withNULs()
    default: return withInvalidUTF8()
    }
  }

  /// Eight bytes from each draw of the generator.
  mutating func randomBytes(_ count: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 8)
    while bytes.count < count { withUnsafeBytes(of: random.next()) { bytes += $0 } }
    return Array(bytes.prefix(count))
  }

  /// Text made of the parser's own punctuation, where the edge cases of its grammar live.
  mutating func tokens() -> [UInt8] {
    let pieces = ["[", "]", "=", "#", ";", " ", "\t", "\r", "\n", "camera", "size", "640x360", "é", "\u{0}"]
    return Array((0..<int(0..<64)).map { _ in pick(pieces) }.joined().utf8)
  }

  /// A window of the shipped file with a few mutations, so that most of it still parses.
  mutating func mutatedShippedFile() -> [UInt8] {
    let start = int(0..<shippedLines.count)
    let count = int(1..<6)
    var lines = Array(shippedLines[start..<min(shippedLines.count, start + count)])
    // Keep the section header so that keys reach their value parsers.
    if let header = shippedLines[..<start].last(where: { $0.first == UInt8(ascii: "[") }) { lines.insert(header, at: 0) }
    for _ in 0..<int(1..<5) {
      let line = int(0..<lines.count)
      switch int(0..<7) {
      case 0 where !lines[line].isEmpty: lines[line][int(0..<lines[line].count)] ^= UInt8(1 << int(0..<8))
      case 1: lines[line].insert(byte(), at: int(0..<(lines[line].count + 1)))
      case 2: lines.insert(lines[line], at: line)
      case 3: lines[line] = Array("\(pick(Self.keys)) = \(pick(Self.values))".utf8)
      case 4: lines[line] += Self.invalidUTF8[int(0..<Self.invalidUTF8.count)]
      case 5: lines[line] = Array("\(pick(Self.keys)) = \(String(repeating: "9", count: int(1..<400)))".utf8)
      default: lines[line] = Array("[\(pick(Self.sections))]".utf8)
      }
    }
    return Array(lines.joined(separator: [0x0A]))
  }

  /// Lines around the length limit, including multi-byte characters that straddle it; built once, picked often.
  static let longLines: [[UInt8]] = {
    var lines: [[UInt8]] = []
    for fill in [[0x61], Array("é".utf8), Array("👍".utf8), [0x20], [0x3D], [0x39]] as [[UInt8]] {
      for length in (IniFile.maximumLineLength - 8)...(IniFile.maximumLineLength + 8) {
        var line = Array("[roll]\npath = /".utf8)
        while line.count < length { line += fill }
        lines.append(line)
        lines.append(line + [0x0A])
      }
    }
    return lines
  }()

  mutating func longLines() -> [UInt8] { pick(Self.longLines) }

  mutating func schemaShaped() -> [UInt8] {
    var text = ""
    for _ in 0..<int(1..<6) {
      if int(0..<3) == 0 { text += "[\(pick(Self.sections))]\n" }
      text += "\(pick(Self.keys)) \(pick(["=", " = ", "=="])) \(pick(Self.values))\(pick(["", " # c", "#c"]))\n"
    }
    return Array(text.utf8)
  }

  mutating func withNULs() -> [UInt8] {
    var bytes = schemaShaped()
    for _ in 0..<int(1..<4) { bytes.insert(0, at: int(0..<(bytes.count + 1))) }
    return bytes
  }

  mutating func withInvalidUTF8() -> [UInt8] {
    var bytes = schemaShaped()
    for _ in 0..<int(1..<4) {
      bytes.insert(contentsOf: Self.invalidUTF8[int(0..<Self.invalidUTF8.count)], at: int(0..<(bytes.count + 1)))
    }
    return bytes
  }
}

@Suite struct ConfigFuzzTests {
  static let seed: UInt64 = 0x6B69_6F73_6B63_616D
  /// KIOSKCAM_FUZZ_INPUTS takes the first N of the same sequence: make pi-test runs 5,000 under emulation.
  static let inputs = getenv("KIOSKCAM_FUZZ_INPUTS").flatMap { Int(String(cString: $0)) } ?? 100_000

  /// Every input comes back as a configuration or as problems that each name a real line of the input.
  /// Finishing at all is the other half of the proof: no input crashes or hangs the parser.
  @Test func theParserNeverCrashesAndEveryProblemNamesALine() throws {
    var fuzzer = ConfigFuzzer(seed: Self.seed, shipped: try readFile(ShippedConfigTests.path))
    var parsed = 0
    var refused = 0
    var badReports: [String] = []
    for index in 0..<Self.inputs {
      let bytes = fuzzer.next(index)
      switch Config.parse(bytes, file: "fuzz.conf") {
      case .success(let config):
        parsed += 1
        if !Set(config.capabilities.required).isDisjoint(with: config.capabilities.optional) {
          badReports.append("input \(index): a capability both required and optional")
        }
      case .failure(let problems):
        refused += 1
        let lineCount = bytes.count { $0 == 0x0A } + 1
        let lines = problems.problems.map(\.line)
        let fine =
          !lines.isEmpty && lines.allSatisfy { (1...lineCount).contains($0) } && lines == lines.sorted()
          && problems.problems.allSatisfy { !$0.message.isEmpty && !$0.message.utf8.contains(0x0A) }
        if !fine { badReports.append("input \(index): \(problems.problems)") }
      }
    }
    #expect(badReports.isEmpty, "\(badReports.prefix(5))")
    #expect(parsed + refused == Self.inputs)
    // Both outcomes are exercised: a fuzzer that only ever produced garbage would prove little.
    #expect(parsed > Self.inputs / 50, "parsed \(parsed)")
    #expect(refused > Self.inputs / 2, "refused \(refused)")
  }

  @Test func theSameSeedGivesTheSameInputs() throws {
    let shipped = try readFile(ShippedConfigTests.path)
    var first = ConfigFuzzer(seed: Self.seed, shipped: shipped)
    var second = ConfigFuzzer(seed: Self.seed, shipped: shipped)
    var other = ConfigFuzzer(seed: Self.seed + 1, shipped: shipped)
    let a = (0..<64).map { first.next($0) }
    #expect(a == (0..<64).map { second.next($0) })
    #expect(a != (0..<64).map { other.next($0) })
  }
}
