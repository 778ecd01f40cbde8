import Foundation
import Testing

/// Device tests: real kernel drivers on the virtual board (vivid, gpio-sim, bochs-drm), driven from outside
/// exactly as a user would. One boot serves them all; `make test` starts the board and sets the environment.
/// Every device test is in this one serialized suite (here and in its extensions, a file a concern), because
/// they share the one camera, display and set of button lines.
@Suite(.serialized, .enabled(if: Board.isUp, "needs the virtual board (make test boots it)"))
struct BoardDeviceTests {
  func jpegs(in roll: String) throws -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: roll)
    var found: [String] = []
    while let path = enumerator?.nextObject() as? String {
      // Hidden names are the roll's temporary files, never published items.
      if path.hasSuffix(".JPG"), !(path as NSString).lastPathComponent.hasPrefix(".") { found.append(path) }
    }
    return found.sorted()
  }

  func hiddenFiles(in roll: String) throws -> [String] {
    try FileManager.default.subpathsOfDirectory(atPath: "\(roll)/DCIM").filter {
      ($0 as NSString).lastPathComponent.hasPrefix(".")
    }
  }

  /// Waits for `message` on the screen (a device's or the card's "not available"), the words in the console font,
  /// white on dark grey, compared pixel by pixel with the font's own bitmaps; fails with the words that never
  /// matched.
  func expectMessageOnScreen(_ message: String) throws {
    var wordsMissing = ["no screendump yet"]
    try Board.waitFor("\(message) on screen") {
      wordsMissing = OverlayText.messageMismatches(in: try Board.screendump(), message, background: (48, 48, 48))
      return wordsMissing.isEmpty
    }
    #expect(wordsMissing.isEmpty, "\(wordsMissing)")
  }
}
