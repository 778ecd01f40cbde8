import Foundation
import Testing

@testable import KioskService

/// The one `--json` set-up: what a script reading `probe`, `status` or `roll list` may rely on.
@Suite struct JSONOutputTests {
  struct Sample: Encodable {
    let zebra = 1
    let device = "/dev/v4l/by-id/usb-cam-video-index0"
    let apple = ["b", "a"]
  }

  /// Keys in order (two outputs diff line by line), paths as written, one key a line, and the text parses back
  /// to the same values.
  @Test func keysAreSortedPathsAsWrittenAndTheTextParses() throws {
    let text = try #require(JSONOutput.text(Sample()))
    #expect(text.contains(#""device" : "/dev/v4l/by-id/usb-cam-video-index0""#))
    #expect(!text.contains(#"\/"#))
    let keys = text.split(separator: "\n").compactMap { (line) -> String? in
      guard let quote = line.firstIndex(of: "\""), line.contains(" : ") else { return nil }
      return String(line[line.index(after: quote)...].prefix { $0 != "\"" })
    }
    #expect(keys == ["apple", "device", "zebra"])
    let parsed = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    #expect(parsed["device"] as? String == Sample().device)
    #expect(parsed["apple"] as? [String] == ["b", "a"])
    #expect(parsed["zebra"] as? Int == 1)
  }
}
