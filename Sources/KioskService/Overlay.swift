import Display
import Imaging
import KioskCore

/// What the overlay says on top of the live picture, decided from the kiosk's screen and the service's counts.
struct OverlayContent: Equatable {
  var mode: KioskMode
  var screen: Screen
  var ready: Bool
  var shotsLeft: Int?
  var now: Instant
  /// Frames the recording in progress could not keep up with (the record says the same).
  var dropped = 0
  /// Optional capabilities that are missing, so people see why a feature is not there.
  var off: [Capability] = []
  /// "2.0x" or "optical 3/6" while zoomed in; nil at the widest.
  var zoom: String? = nil
}

/// The kiosk's words and marks, in the console font, sized for a display read from about 2 m.
///
/// On the live picture only small rectangles are drawn, on top of a frame that is drawn anyway, so the cost is
/// their area, not the screen's. A full-screen message is drawn once per change of screen.
struct Overlay {
  let painter: TextPainter
  let width: Int
  let height: Int

  /// Labels at the corners: about 1/12 of the screen height (64 px on a 1280x800 panel).
  var labelScale: Int { max(1, height / (painter.font.glyphHeight * 12)) }
  /// Countdown digits: a third of the height.
  var digitScale: Int { max(1, height / (painter.font.glyphHeight * 3)) }
  var margin: Int { max(4, height / 32) }

  static let white: UInt32 = 0x00FF_FFFF
  static let shade: UInt32 = 0x0000_0000
  static let messageBackground: UInt32 = 0x0030_3030
  static let fatalBackground: UInt32 = 0x0050_1010
  static let green: UInt32 = 0x0000_C040
  static let red: UInt32 = 0x00E0_2020

  /// Full-screen words: each line centred, at the largest whole scale up to 4 at which the widest line fits
  /// 90% of the width; the block is centred vertically.
  /// A full-screen state: the words in the font when there is one, else the plain background colour.
  static func drawMessage(_ lines: [String], background: UInt32, with overlay: Overlay?, on target: DrawTarget) {
    guard let overlay else { return fill(target, with: background) }
    overlay.drawMessage(lines, background: background, on: target)
  }

  static func fill(_ target: DrawTarget, with colour: UInt32) {
    for row in 0..<target.height {
      (target.pixels.baseAddress! + row * target.stride).assumingMemoryBound(to: UInt32.self)
        .update(repeating: colour, count: target.width)
    }
  }

  func drawMessage(_ lines: [String], background: UInt32, on target: DrawTarget) {
    Self.fill(target, with: background)
    guard let widest = lines.max(by: { $0.unicodeScalars.count < $1.unicodeScalars.count }) else { return }
    let scale = painter.scale(fitting: widest, width: target.width * 9 / 10, limit: 4)
    let lineHeight = painter.font.glyphHeight * scale
    var y = (target.height - lineHeight * lines.count) / 2
    for line in lines {
      let x = (target.width - painter.size(of: line, scale: scale).width) / 2
      text(line, x: x, y: y, scale: scale, background: nil, on: target)
      y += lineHeight
    }
  }

  /// The marks over the live picture: mode and ready cue top left, shots left top right, countdown digits in
  /// the middle, recording dot with elapsed and remaining time top centre.
  func drawLive(_ content: OverlayContent, on target: DrawTarget) {
    let scale = labelScale
    let cell = painter.font.glyphHeight * scale
    let label = content.mode.rawValue.uppercased()
    text(label, x: margin, y: margin, scale: scale, background: Self.shade, on: target)
    if content.ready {
      let labelWidth = painter.size(of: label, scale: scale).width
      OverlayShapes.disc(
        centreX: margin + labelWidth + cell / 2, centreY: margin + cell / 2, radius: cell / 4, colour: Self.green,
        into: target.pixels, width: target.width, height: target.height, stride: target.stride)
    }
    if let zoom = content.zoom {
      text(zoom, x: margin, y: margin + cell + margin / 2, scale: scale, background: Self.shade, on: target)
    }
    if let shots = content.shotsLeft {
      let words = "\(shots) left"
      let x = target.width - margin - painter.size(of: words, scale: scale).width
      text(words, x: x, y: margin, scale: scale, background: Self.shade, on: target)
    }
    switch content.screen {
    case .countdown(let seconds):
      let digits = String(seconds)
      let size = painter.size(of: digits, scale: digitScale)
      text(digits, x: (target.width - size.width) / 2, y: (target.height - size.height) / 2, scale: digitScale,
        background: nil, on: target)
    case .recording(let since, let until):
      let elapsed = clock(content.now - since)
      let remaining = clock(until - content.now)
      let words = "\(elapsed) -\(remaining)"
      let textWidth = painter.size(of: words, scale: scale).width
      let x = (target.width - textWidth + cell) / 2
      OverlayShapes.disc(
        centreX: x - cell / 2, centreY: margin + cell / 2, radius: cell / 3, colour: Self.red,
        into: target.pixels, width: target.width, height: target.height, stride: target.stride)
      text(words, x: x, y: margin, scale: scale, background: Self.shade, on: target)
      if content.dropped > 0 {
        let note = "\(content.dropped) dropped"
        text(note, x: (target.width - painter.size(of: note, scale: scale).width) / 2, y: margin + cell, scale: scale,
          background: Self.shade, on: target)
      }
    case .checkingPhoto:
      let words = "Review"
      let size = painter.size(of: words, scale: scale)
      text(words, x: (target.width - size.width) / 2, y: target.height - margin - size.height, scale: scale,
        background: Self.shade, on: target)
    case .live, .reviewing, .message:
      break
    }
    if !content.off.isEmpty {
      // Small, bottom left: a note for whoever looks after the kiosk, not a message for its users.
      let small = max(1, scale / 2)
      let words = "Off: " + content.off.map(\.feature).joined(separator: ", ")
      let y = target.height - margin - painter.font.glyphHeight * small
      text(words, x: margin, y: y, scale: small, background: Self.shade, on: target)
    }
  }

  /// Review mode's words over the item: what it is and when (top left), where it is in the roll (bottom
  /// right), and the delete question in the middle while it is asked.
  func drawReview(_ view: ReviewView, title: String, date: String, on target: DrawTarget) {
    let scale = labelScale
    let cell = painter.font.glyphHeight * scale
    text(title, x: margin, y: margin, scale: scale, background: Self.shade, on: target)
    if !date.isEmpty { text(date, x: margin, y: margin + cell, scale: scale, background: Self.shade, on: target) }
    let position = view.positionText
    let size = painter.size(of: position, scale: scale)
    text(position, x: target.width - margin - size.width, y: target.height - margin - size.height, scale: scale,
      background: Self.shade, on: target)
    if view.confirmingDelete {
      let lines = ["Delete?", "shutter: yes", "other: no"]
      var y = (target.height - cell * lines.count) / 2
      for line in lines {
        let width = painter.size(of: line, scale: scale).width
        text(line, x: (target.width - width) / 2, y: y, scale: scale, background: Self.red, on: target)
        y += cell
      }
    }
  }

  private func text(_ words: String, x: Int, y: Int, scale: Int, background: UInt32?, on target: DrawTarget) {
    painter.draw(
      words, x: x, y: y, scale: scale, colour: Self.white, background: background,
      into: target.pixels, width: target.width, height: target.height, stride: target.stride)
  }

  /// m:ss, never negative.
  private func clock(_ duration: Duration) -> String {
    let seconds = max(0, Int(duration.components.seconds))
    let rest = seconds % 60
    return "\(seconds / 60):\(rest < 10 ? "0" : "")\(rest)"
  }
}
