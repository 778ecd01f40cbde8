#if canImport(Glibc)
  import Glibc
#endif
import Display
import KioskCore

/// The screen of a service that cannot run: the reasons stay in the log and on standard error; the screen
/// shows that something is wrong for as long as configured, so a person at the kiosk is not left with a
/// frozen picture.
enum FatalScreen {
  static func show(_ display: KMSDisplay, _ overlay: Overlay?, missing fatal: [String], for duration: Duration) {
    guard duration > .zero else { return }
    // "Starting..." may still be flipping in: wait for it, or the refusal would leave it on screen.
    display.waitForFlip(milliseconds: 1000)
    _ = try? display.present { target in
      Overlay.drawMessage(words(fatal), background: Overlay.fatalBackground, with: overlay, on: target)
    }
    let (seconds, attoseconds) = duration.components
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
  }

  /// Plain words for the required capabilities that are missing (the reasons themselves are in the log).
  static func words(_ fatal: [String]) -> [String] {
    var words: [String] = []
    for line in fatal {
      let name = line.prefix { $0 != " " }
      let phrase =
        switch name {
        case "still-camera", "movie-camera": "Camera not available"
        case "camera-roll": "Storage not available"
        case "shutter-button": "Shutter button not available"
        case "mode-button": "Mode button not available"
        case "flash": "Flash not available"
        case "zoom": "Zoom not available"
        default: "\(name) not available"
        }
      if !words.contains(phrase) { words.append(phrase) }
    }
    return words
  }
}
