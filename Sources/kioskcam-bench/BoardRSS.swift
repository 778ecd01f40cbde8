import Foundation

/// Peak resident memory of `kioskcam run` on the virtual board for issue 39's mix: a YUYV preview (1280x720 at
/// 12 fps, or 640x360 at 30) for 100 frames shown, a still, then a 5 s H.264 movie at the same size, from the
/// service's own stop line (getrusage's ru_maxrss), with VmRSS after each step read from /proc in the guest.
/// Only when the board is up (`make board-start`); nil otherwise.
func boardPeakRSS(width: Int = 1280, height: Int = 720, frameRate: Int = 12) throws -> String? {
  let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path
  let cli = "\(repository)/board/virtual/board"
  guard let state = ProcessInfo.processInfo.environment["KIOSKCAM_BOARD_DIR"],
    FileManager.default.fileExists(atPath: "\(state)/agent.sock"),
    (try? run([cli, "status"])) == 0
  else { return nil }
  let binary = "\(repository)/.build/release/kioskcam"
  let share = "\(state)/share"
  let roll = "\(share)/bench-rss-roll"
  try? FileManager.default.removeItem(atPath: roll)
  try FileManager.default.createDirectory(atPath: roll, withIntermediateDirectories: true)
  let template = try String(contentsOfFile: "\(repository)/board/virtual/kioskcam.conf", encoding: .utf8)
  let config = "\(share)/bench-rss.conf"
  try (template.replacingOccurrences(of: "@ROLL@", with: roll)
    .replacingOccurrences(of: "size = 640x360", with: "size = \(width)x\(height)")
    .replacingOccurrences(of: "frame-rate = 30", with: "frame-rate = \(frameRate)")
    .replacingOccurrences(of: "optional = display, mode-button", with: "optional = display, mode-button, movie-camera, h264-encoder")
    + "[movie]\nsize = \(width)x\(height)\nframe-rate = \(frameRate)\ncodec = h264\n")
    .write(toFile: config, atomically: true, encoding: .utf8)
  let service = "\(binary) run --config \(config)"
  try run([cli, "spawn", "bench-rss", "--", service])
  let log = "\(share)/logs/bench-rss.log"
  func logged() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
  /// A command in the guest, its standard output.
  func guest(_ command: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: cli)
    process.arguments = ["run", "--", command]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
  }
  func control(_ request: String) throws { _ = try guest("\(binary) \(request) --config \(config)") }
  func resident() throws -> String {
    let kilobytes = try guest("grep VmRSS /proc/$(pgrep -f '\(service)' | head -1)/status")
      .split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { Int($0) }
    return kilobytes.map { String(format: "%.1f MiB", Double($0) / 1024) } ?? "?"
  }
  func waitFor(_ text: String, seconds: Int = 300) {
    for _ in 0..<seconds * 2 where !logged().contains(text) { Thread.sleep(forTimeInterval: 0.5) }
  }
  // Let it preview for a while: 100 frames shown (emulated, so this takes tens of seconds), at most 5 minutes.
  var shown = 0
  waitFor("kioskcam: ready")
  for _ in 0..<600 where shown < 100 {
    Thread.sleep(forTimeInterval: 0.5)
    let status = try guest("\(binary) status --json --config \(config)")
    if let object = try? JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any] {
      shown = object["previewFramesShown"] as? Int ?? 0
    }
  }
  let previewing = try resident()
  try control("shutter")
  waitFor("still DCIM/100KIOSK/IMG_0001.JPG")
  let afterStill = try resident()
  try control("mode movie")
  try control("shutter")
  waitFor("kioskcam: movie recording")
  Thread.sleep(forTimeInterval: 5)
  let recording = try resident()
  try control("shutter")
  waitFor("IMG_0002.MP4 saved")
  let afterMovie = try resident()
  try run([cli, "kill", "bench-rss", "TERM", "--wait", "30"])
  guard let line = logged().split(separator: "\n").last(where: { $0.contains("peak resident memory") }) else {
    return "no stop line in \(log)"
  }
  let peak = line.components(separatedBy: "peak resident memory: ").last ?? ""
  return "\(peak); resident after \(shown) preview frames \(previewing), after the still "
    + "\(afterStill), recording \(recording), after the movie \(afterMovie)"
}

/// Both sizes of the mix, a line each, against issue 39's 32 MiB: at 1280x720 x264 alone takes more than the
/// camera's frames leave of it (docs/performance.md).
func boardPeakRSSLines() throws -> [String]? {
  var lines: [String] = []
  for (width, height, rate, target) in [
    (1280, 720, 12, "32 MiB is out of reach with software H.264 at this size: x264 alone holds 16.6 MiB"),
    (640, 360, 30, "target under 32 MiB"),
  ] {
    guard let peak = try boardPeakRSS(width: width, height: height, frameRate: rate) else { return nil }
    lines.append(
      "kioskcam run on the virtual board, a \(width)x\(height) preview at \(rate) fps, a still and a 5 s H.264 movie: "
        + "peak resident memory \(peak) (\(target))")
  }
  return lines
}
