import Foundation
import Testing

/// The board's USB webcam (board/virtual/webcam.py on raw-gadget over dummy_hcd, driven by uvcvideo), as the
/// tests that want it plug it: `board webcam plug|unplug|truncate`, and the frames it logged.
extension Board {
  /// The link udev makes for it, as for any USB camera.
  static let webcamLink = "/dev/v4l/by-id/usb-kioskcam_Board_Webcam_KC16-video-index0"

  /// One frame the webcam sent, from its log.
  struct WebcamFrame {
    let counter: Int
    /// CLOCK_MONOTONIC (guest) when it began to draw it, and when its bulk write began.
    let drawn: Double
    let writeStarted: Double
    let zoom: Int
    let size: String
    /// SHA-256 of the JPEG to its EOI, and of its scan (SOS to EOI); "-" for YUYV.
    let sha: String
    let scan: String
  }

  /// Plugs the webcam in unless it is; returns uvcvideo's capture node once it is there.
  @discardableResult
  static func plugWebcam() throws -> String {
    let nodes = try host([cli, "webcam", "node"], timeout: 60)
    // uvcvideo drives nothing else on the board: a node of its own is the webcam, plugged.
    if let node = nodes.stdout.split(separator: "\n").first { return String(node) }
    let plugged = try host([cli, "webcam", "plug"], timeout: 120)
    guard plugged.status == 0 else { throw BoardFailure("webcam plug: \(plugged.stderr)") }
    return plugged.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  static func unplugWebcam() throws {
    let unplugged = try host([cli, "webcam", "unplug"], timeout: 120)
    guard unplugged.status == 0 else { throw BoardFailure("webcam unplug: \(unplugged.stderr)") }
  }

  /// The board as it boots, for the tests that follow: vivid its only cameras (a test of `device = auto`
  /// or of every camera's verdict would find the webcam too).
  static func leaveWebcamUnplugged() {
    if let nodes = try? host([cli, "webcam", "node"], timeout: 60), !nodes.stdout.isEmpty { _ = try? unplugWebcam() }
  }

  static func truncateWebcamFrame() throws {
    let done = try host([cli, "webcam", "truncate"])
    guard done.status == 0 else { throw BoardFailure("webcam truncate: \(done.stderr)") }
  }

  /// The frames the webcam has sent since it was plugged, in order.
  static func webcamFrames() throws -> [WebcamFrame] {
    try logs("webcam").split(separator: "\n").compactMap { line in
      let words = line.split(separator: " ").map(String.init)
      guard words.first == "frame", words.count >= 12, let counter = Int(words[1]) else { return nil }
      var fields: [String: String] = [:]
      for word in words.dropFirst(2) {
        let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
        if parts.count == 2 { fields[parts[0]] = parts[1] }
      }
      guard let mono = fields["mono"].flatMap(Double.init), let draw = fields["draw"].flatMap(Double.init),
        let zoom = fields["zoom"].flatMap(Int.init)
      else { return nil }
      return WebcamFrame(
        counter: counter, drawn: mono, writeStarted: mono + draw, zoom: zoom, size: words[5], sha: fields["sha"] ?? "",
        scan: fields["scan"] ?? "")
    }
  }

  /// The counter of the webcam frame on the screen (a `size` frame shown 1:1 from row `top`, as 1280x720 is on
  /// the 1280x800 panel), read from a screendump by webcam.py itself, which draws it: nil when none is there.
  static func webcamCounterOnScreen(size: (Int, Int) = (1280, 720), top: Int = 40) throws -> Int? {
    let path = "\(stateDirectory!)/test-counter-screen.ppm"
    let dumped = try host([cli, "screendump", path])
    guard dumped.status == 0 else { throw BoardFailure("screendump: \(dumped.stderr)") }
    let read = try host([
      "/usr/bin/python3", "\(repository)/board/virtual/webcam.py", "counter", path, "0", "\(top)", "\(size.0)", "\(size.1)",
    ])
    guard read.status == 0 else { throw BoardFailure("webcam.py counter: \(read.stderr)") }
    return Int(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
  }

  /// The frame counters the webcam logged as sent truncated.
  static func webcamTruncated() throws -> [Int] {
    try logs("webcam").split(separator: "\n").compactMap { line in
      line.hasPrefix("truncated ") ? Int(line.dropFirst("truncated ".count)) : nil
    }
  }

  /// The zoom values uvcvideo set on the webcam (each SET_CUR it answered), in order.
  static func webcamZoomRequests() throws -> [Int] {
    try logs("webcam").split(separator: "\n").compactMap { line in
      line.hasPrefix("zoom SET_CUR ") ? Int(line.dropFirst("zoom SET_CUR ".count)) : nil
    }
  }

  /// The board's configuration with the webcam as the camera (by its by-id link), MJPEG at `size`.
  static func makeWebcamConfig(
    name: String, size: String = "1280x720", edit: @escaping (String) -> String = { $0 }
  ) throws -> (config: String, roll: String) {
    try makeConfig(name: name) {
      edit(
        $0.replacingOccurrences(
          of: "device = auto\nformat = yuyv\nsize = 640x360\n",
          with: "device = \(webcamLink)\nformat = mjpeg\nsize = \(size)\n"))
    }
  }

  /// SHA-256 (sha256sum's) of each JPEG's scan: from its SOS marker through EOI, what a passthrough still or
  /// movie frame must carry unchanged from the camera.
  static func scanDigests(of paths: [String]) throws -> [String] {
    let folder = "\(stateDirectory!)/test-scans"
    try? FileManager.default.removeItem(atPath: folder)
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    var scans: [String] = []
    for (index, path) in paths.enumerated() {
      let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
      // Walked segment by segment: the EXIF thumbnail in APP1 has an SOS of its own.
      var sos = 2
      while sos + 3 < bytes.count, bytes[sos] == 0xFF, bytes[sos + 1] != 0xDA {
        sos += 2 + (Int(bytes[sos + 2]) << 8 | Int(bytes[sos + 3]))
      }
      guard sos + 1 < bytes.count, bytes[sos + 1] == 0xDA,
        let eoi = (sos..<(bytes.count - 1)).last(where: { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD9 })
      else { throw BoardFailure("\(path): no SOS ... EOI") }
      let scan = "\(folder)/\(index).scan"
      try Data(bytes[sos...(eoi + 1)]).write(to: URL(fileURLWithPath: scan))
      scans.append(scan)
    }
    guard !scans.isEmpty else { return [] }
    let sums = try host(["/usr/bin/sha256sum"] + scans)
    guard sums.status == 0 else { throw BoardFailure("sha256sum: \(sums.stderr)") }
    return sums.stdout.split(separator: "\n").map { String($0.prefix(64)) }
  }
}
