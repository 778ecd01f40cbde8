import Foundation

/// Peak resident memory of `kioskcam run` previewing 1280x720 YUYV on the virtual board, from the service's own
/// stop line (getrusage's ru_maxrss). Only when the board is up (`make board-start`); nil otherwise.
func boardPeakRSS() throws -> String? {
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
  try template.replacingOccurrences(of: "@ROLL@", with: roll)
    .replacingOccurrences(of: "size = 640x360", with: "size = 1280x720")
    .replacingOccurrences(of: "frame-rate = 30", with: "frame-rate = 12")
    .write(toFile: config, atomically: true, encoding: .utf8)
  try run([cli, "spawn", "bench-rss", "--", "\(binary) run --config \(config)"])
  let log = "\(share)/logs/bench-rss.log"
  // Let it preview for a while: 100 frames shown (emulated, so this takes tens of seconds), at most 5 minutes.
  var shown = 0
  for _ in 0..<600 where shown < 100 {
    Thread.sleep(forTimeInterval: 0.5)
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    guard text.contains("kioskcam: ready") else { continue }
    let status = Process()
    status.executableURL = URL(fileURLWithPath: cli)
    status.arguments = ["run", "--", "\(binary) status --json --config \(config)"]
    let pipe = Pipe()
    status.standardOutput = pipe
    status.standardError = FileHandle.nullDevice
    try status.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    status.waitUntilExit()
    if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
      shown = object["previewFramesShown"] as? Int ?? 0
    }
  }
  try run([cli, "kill", "bench-rss", "TERM", "--wait", "30"])
  let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
  guard let line = text.split(separator: "\n").last(where: { $0.contains("peak resident memory") }) else {
    return "no stop line in \(log)"
  }
  return "\(line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "")"
    + " after \(shown) preview frames"
}
