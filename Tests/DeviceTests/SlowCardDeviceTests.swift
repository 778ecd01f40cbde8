import Foundation
import Testing

/// A slow card (dm-delay: every write, flush and FUA 200 ms late, as an SD card stalls): the loop must never
/// wait on it. In the serialized board suite: it holds the camera.
extension BoardSuite {
  /// Shown frames a second, from `status` counters over `seconds`, with the camera's frames received and
  /// missing (by sequence) in the same window.
  func rates(over seconds: Double) throws -> (shown: Double, received: Double, missing: Int) {
    let before = try Counters.now()
    let start = Date()
    Thread.sleep(forTimeInterval: seconds)
    let after = try Counters.now()
    let elapsed = Date().timeIntervalSince(start)
    return (
      Double(after.shown - before.shown) / elapsed, Double(after.received - before.received) / elapsed,
      after.missing - before.missing
    )
  }
}

extension BoardDeviceTests.Storage.Long {
  /// The preview while a 640x360 movie records, on the slow card against the same recording on a healthy
  /// one (the peer: the guest's CPU is shared with the encoders either way, so only the card differs), and
  /// idle; a still's press against its edge on the slow card; the movie's frames, and the ones the card could
  /// not take counted as dropped in its record.
  /// About five minutes on the emulated board: `make storage-test`.
  @Test(.enabled(if: Card.full, "make storage-test runs it"))
  func aSlowCardNeverHoldsThePreviewOrThePress() throws {
    try Card.format("ext4")
    let name = "slowcard"
    let (config, _) = try movieConfig(name, edit: Card.roll(name))
    var figures: [String] = []
    try Board.withService(name, config: config) {
      // Stills first, the card slow: the frame saved is the nearer of the two around each press.
      try Card.card("slow 200")
      for n in 1...3 { try press(name, expecting: "DCIM/100KIOSK/IMG_000\(n).JPG") }
      let presses = try Board.logs(name).split(separator: "\n").filter { $0.contains("kioskcam: press at ") }
      for line in presses {
        let words = line.split(separator: " ").map(String.init)
        let offsets = ["before", "after"].compactMap { label -> Double? in
          guard let at = words.firstIndex(of: label), !words[at + 1].hasPrefix("none") else { return nil }
          return Double(words[at + 3])
        }
        try #require(offsets.count == 2, "\(line)")
        let interval = offsets[1] - offsets[0]
        let saved = words.last ?? ""
        let nearer = abs(offsets[0]) <= abs(offsets[1]) ? "before" : "after"
        let nearerSequence = words[words.firstIndex(of: nearer)! + 1]
        #expect(nearerSequence == saved, "\(line)")
        figures.append("press: frames \(offsets[0]) / +\(offsets[1]) ms around it (interval \(interval) ms), saved \(nearer)")
      }

      try Card.card("heal")
      let idle = try rates(over: 10)
      _ = try startRecording(name)
      try Board.waitOnShare("the first frame") { try Board.logs(name).contains("movie first frame") }
      let healthy = try rates(over: 10)
      #expect(try Board.control("shutter").status == 0)
      try Board.waitOnShare("the healthy card's movie") { Card.movies(in: try Board.logs(name)).count == 1 }

      try Card.card("slow 200")
      let recordingStart = try Counters.now()
      _ = try startRecording(name)
      try Board.waitFor("the first frame on the slow card") {
        try Board.logs(name).split(separator: "\n").filter { $0.contains("movie first frame") }.count == 2
      }
      let slow = try rates(over: 10)
      #expect(try Board.control("shutter").status == 0)
      let recordingEnd = try Counters.now()
      try Board.waitOnShare("the slow card's movie", seconds: 300) { Card.movies(in: try Board.logs(name)).count == 2 }
      try Card.card("heal")

      figures.append(String(format: "preview shown: idle %.1f/s; recording on a healthy card %.1f/s; on the slow card %.1f/s (%.0f%% of healthy)",
        idle.shown, healthy.shown, slow.shown, 100 * slow.shown / max(healthy.shown, 0.001)))
      figures.append(String(format: "camera received: idle %.1f/s, healthy %.1f/s, slow %.1f/s; missing by sequence in 10 s: %d, %d, %d",
        idle.received, healthy.received, slow.received, idle.missing, healthy.missing, slow.missing))
      #expect(slow.shown >= 0.9 * healthy.shown, "the slow card holds the preview: \(figures)")

      let log = try Board.logs(name)
      let movie = try #require(Card.movies(in: log).last)
      let line = try #require(log.split(separator: "\n").last { $0.hasPrefix("kioskcam: movie \(movie) frames ") })
      figures.append("slow card's movie: \(line.dropFirst("kioskcam: movie ".count)); camera received \(recordingEnd.received - recordingStart.received), missing \(recordingEnd.missing - recordingStart.missing) while recording")
    }
    let found = try Card.check()
    #expect(found.problems.isEmpty, "\(found.problems)")
    let records = try Board.run("cat \(Card.mount)/.kioskcam-items.jsonl").stdout.split(separator: "\n")
    if let last = records.last { figures.append("its record: \(last)") }
    for figure in figures { print("slow card: \(figure)") }
  }
}

extension BoardDeviceTests.Storage {
  /// Opening a recording is disk work (the hidden file, its folder and its header, each fsynced): on a card
  /// that takes 3 s a write it takes many seconds, and the loop must go on meanwhile. `kioskcam shutter` and
  /// `status` are answered by the loop, so both answering, with more frames shown between two `status`
  /// calls, before the log says the recording opened, is the loop not waiting on the card. Once the card is
  /// healthy the movie is published and the frames it could not take are in its record as dropped.
  @Test func aRecordingOpensOffTheLoopOnAStallingCard() throws {
    try Card.format("ext4")
    let name = "stallcard"
    let (config, _) = try movieConfig(name, edit: Card.roll(name))
    try Board.withService(name, config: config) {
      #expect(try Board.control("mode movie").status == 0)
      try Card.card("slow 3000")
      let shutter = try Board.control("shutter")
      #expect(shutter.status == 0, "\(shutter.stderr)")
      let first = try Counters.now()
      Thread.sleep(forTimeInterval: 1)
      let second = try Counters.now()
      let opened = try Board.logs(name).contains("kioskcam: movie recording")
      print("stalling card: shown \(first.shown) then \(second.shown) while the recording opened: \(opened ? "already open" : "still opening")")
      #expect(!opened, "the loop answered only once the recording was open")
      #expect(second.shown > first.shown, "the preview went on while the recording opened")
      #expect(try Board.status()["recording"] as? Bool == true)
      try Card.card("heal")
      try Board.waitOnShare("the recording open") { try Board.logs(name).contains("kioskcam: movie recording") }
      try Board.waitOnShare("the first frame") { try Board.logs(name).contains("movie first frame") }
      Thread.sleep(forTimeInterval: 1)
      #expect(try Board.control("shutter").status == 0)
      try Board.waitOnShare("the movie") { !Card.movies(in: try Board.logs(name)).isEmpty }
    }
    let found = try Card.check()
    #expect(found.problems.isEmpty && found.visible.count == 1 && found.hidden.isEmpty, "\(found)")
    let record = try Board.run("cat \(Card.mount)/.kioskcam-items.jsonl").stdout
    print("stalling card: \(record)")
    let dropped = record.split(separator: ",").first { $0.hasPrefix("\"droppedFrames\":") }
    #expect(dropped.flatMap { Int($0.split(separator: ":")[1]) }.map { $0 > 0 } == true, "the frames the opening cost are counted: \(record)")
  }
}
