import Foundation
import Testing

/// Device tests: real kernel drivers on the virtual board (vivid, gpio-sim, bochs-drm), driven from outside
/// exactly as a user would. One boot serves them all; `make test` starts the board and sets the environment.
/// Every device test is in this one serialized suite (here and in its extensions, a file a concern) or in a
/// suite nested in it, because they share the one camera, display and set of button lines.
///
/// The make targets pick their tests by the nested suites, never by test names, so a renamed test stays in its
/// tier: `make test` runs all but the `Long` and `BoardPowerCut` suites, `make pi-test` the `Lines` suite again
/// with the libgpiod 2 build, `make storage-test` the `Storage` suite but `BoardPowerCut`,
/// `make power-cut-test` that one, `make sound-test` the `Sound` suite (the Makefile's `DEVICE_SUITE` patterns).
@Suite(.serialized, .enabled(if: Board.isUp, "needs the virtual board (make test boots it)"))
struct BoardDeviceTests: BoardSuite {
  /// Whatever drives or reads GPIO lines through libgpiod: buttons, lamps and the probe's chips.
  @Suite struct Lines: BoardSuite {}

  /// The roll on the board's memory card: healthy, slow, failing, pulled and cut off.
  @Suite struct Storage: BoardSuite {
    /// Minutes each: only `make storage-test` runs them.
    @Suite struct Long: BoardSuite {}
    /// QEMU killed under the appliance, ten times: only `make power-cut-test` runs it.
    @Suite struct BoardPowerCut: BoardSuite {}
  }

  /// The microphone (snd-aloop's loopback).
  @Suite struct Sound: BoardSuite {
    /// About 75 s of a loaded board: only `make sound-test` runs it.
    @Suite struct Long: BoardSuite {}
  }
}

/// What the device test suites share: helpers on the roll, presses, movies and the screen. A protocol, so that
/// the suites nested in BoardDeviceTests (their own types) have them too.
protocol BoardSuite {}

extension BoardSuite {
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
