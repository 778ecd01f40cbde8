import Foundation
import Testing

/// A card that fails (dm-flakey: every write EIO from a moment on) and a card pulled out (the device gone
/// under the mounted file system), on the board's card (Board+Storage.swift). In the serialized board suite:
/// every test here holds the camera.
extension BoardDeviceTests {
  /// The guest's CLOCK_MONOTONIC now, in seconds (/proc/uptime: the guest never suspends), the clock vivid
  /// stamps frames with and the kiosk's checks are logged by.
  func guestClock() throws -> Double {
    try #require(try Board.run("cat /proc/uptime").stdout.split(separator: " ").first.flatMap { Double($0) })
  }

  /// The visible names of the card's roll folder, as anyone pulling it sees them.
  func visibleOnCard() throws -> [String] {
    try Board.run("ls \(Card.mount)/DCIM/100KIOSK").stdout.split(separator: "\n").map(String.init)
  }

  /// The time in a `storage lost: ... (at T)` or `storage back: ... (at T)` line: the kiosk's check.
  func storageChecks(_ word: String, in log: String) -> [Double] {
    log.split(separator: "\n").filter { $0.hasPrefix("kioskcam: storage \(word): ") }.compactMap { line in
      line.split(separator: " ").last.flatMap { Double($0.trimmingCharacters(in: CharacterSet(charactersIn: "()"))) }
    }
  }

  /// The movie's record on the card and ffprobe's frame count of its file, which must agree; and the card's
  /// roll whole by the peers, nothing left hidden, only `expected` visible.
  func expectCardRoll(_ expected: [String], movie: String) throws -> (frames: Int, seconds: Double, recovered: Bool) {
    let found = try Card.check()
    #expect(found.problems.isEmpty, "\(found.problems)")
    #expect(found.hidden.isEmpty && found.unrecorded.isEmpty, "nothing hidden, every item recorded: \(found)")
    #expect(found.visible.map(\.file) == expected, "\(found.visible)")
    let records = try Board.run("cat \(Card.mount)/.kioskcam-items.jsonl").stdout.split(separator: "\n")
    let line = try #require(records.first { $0.contains("\"file\":\"\(movie)\"") }, "the movie's record: \(records)")
    let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    let frames = try #require(record["frames"] as? Int)
    #expect(found.visible.first { $0.file == movie }?.frames == frames, "ffprobe's count is the record's \(frames)")
    return (frames, record["durationSeconds"] as? Double ?? 0, record["recovered"] as? Bool ?? false)
  }

  /// ext4, as the appliance ships. A still whose write fails (EIO) gives "Save failed" and leaves nothing
  /// visible; ext4 then goes read-only ("Remounting filesystem read-only"), which the storage monitor sees as
  /// "Storage not available", and no press can work until the card is taken out and put back (`remount`:
  /// unmounted, fsck'ed, mounted, as a user or a reboot does); then the next press takes the number the failed
  /// one did not use. A recording whose write fails stops at once ("Save failed"); on the read-only card its
  /// file cannot be finished, so it is published when the card is back: cut to its last whole fragment, whole
  /// by ffmpeg, its record's frames ffprobe's, at most a second short of the failure.
  @Test func aFailingCardFailsTheSaveAndTheCardPutBackTakesTheNextPressAndTheMovie() throws {
    try Card.format("ext4")
    let name = "failcard"
    let (config, _) = try movieConfig(name, edit: Card.roll(name))
    let movie = "DCIM/100KIOSK/IMG_0003.MOV"
    let (failedAt, firstFrame) = try Board.withService(name, config: config) { () throws -> (Double, Double) in
      try press(name, expecting: "DCIM/100KIOSK/IMG_0001.JPG")
      try Card.card("fail")
      try Board.click("shutter")
      try Board.waitFor("the save to fail") { try Board.logs(name).contains("kioskcam: save failed: ") }
      var log = try Board.logs(name)
      #expect(log.contains("kioskcam: screen: Save failed"), "\(log)")
      #expect(try visibleOnCard() == ["IMG_0001.JPG"], "nothing visible from the failed save")
      print("failing card, still: \(log.split(separator: "\n").filter { $0.contains("save failed") || $0.contains("storage lost") })")

      try Card.card("remount")
      try Board.waitFor("the card back") { try Board.logs(name).contains("kioskcam: storage back: ") }
      try press(name, expecting: "DCIM/100KIOSK/IMG_0002.JPG")

      _ = try startRecording(name)
      try Board.waitFor("the first frame") { try Board.logs(name).contains("movie first frame") }
      Thread.sleep(forTimeInterval: 2)
      let failedAt = try guestClock()
      try Card.card("fail")
      try Board.waitFor("the recording to stop") { try Board.logs(name).contains("kioskcam: movie failed: ") }
      log = try Board.logs(name)
      #expect(log.split(separator: "\n").filter { $0 == "kioskcam: screen: Save failed" }.count >= 2, "\(log)")
      #expect(try Board.status()["recording"] as? Bool == false)
      try Card.card("remount")
      try Board.waitFor("the movie published once the card is back") {
        try Board.logs(name).contains("kioskcam: movie \(movie) recovered")
      }
      log = try Board.logs(name)
      print("failing card, movie: \(log.split(separator: "\n").filter { $0.contains("kioskcam: movie ") || $0.contains("storage ") })")
      let first = try #require(
        log.split(separator: "\n").first { $0.contains("kioskcam: movie first frame") }?.split(separator: " ").last
          .flatMap { Double($0) })
      return (failedAt, first)
    }
    let kept = try expectCardRoll(["DCIM/100KIOSK/IMG_0001.JPG", "DCIM/100KIOSK/IMG_0002.JPG", movie], movie: movie)
    print("failing card: \(kept.frames) frames, \(kept.seconds) s kept of \(failedAt - firstFrame) s before the failure")
    #expect(kept.recovered && kept.frames > 0)
    #expect(kept.seconds >= failedAt - firstFrame - 1.0, "at most a second short of the failure")
  }

  /// The card pulled mid-recording (dm `error` under the mounted ext4, the mount point taken away as an
  /// automounter does): the storage monitor's next check (every second while recording) sees it, "Storage not
  /// available" within 2 s of the pull by the guest's clock, the recording stops, `status` answers meanwhile and
  /// the service stays up. Put back (fsck, mount): the recording the pull cut off is published then, by the
  /// same service (recovered, whole by ffmpeg, its record's frames ffprobe's), and the next still takes the
  /// number after it.
  @Test func aCardPulledMidRecordingIsSeenAtOnceAndItsMovieIsRecoveredWhenItIsBack() throws {
    try Card.format("ext4")
    let name = "pullcard"
    let (config, _) = try movieConfig(name, edit: Card.roll(name))
    let movie = "DCIM/100KIOSK/IMG_0001.MOV"
    try Board.withService(name, config: config) {
      _ = try startRecording(name)
      try Board.waitFor("the first frame") { try Board.logs(name).contains("movie first frame") }
      Thread.sleep(forTimeInterval: 2)
      let pulledAt = try guestClock()
      try Card.card("pull")
      let answered = try Board.status()
      try Board.waitFor("the card seen gone") { !storageChecks("lost", in: try Board.logs(name)).isEmpty }
      let seen = try #require(storageChecks("lost", in: try Board.logs(name)).first)
      print(String(format: "card pulled: storage lost %.2f s after the pull; status answered (screen %@)", seen - pulledAt, "\(answered["screen"] ?? "")"))
      #expect(seen - pulledAt <= 2.0, "Storage not available within 2 s of the pull")
      // "Save failed" (the recording's last write) may hold the screen for its 3 s first.
      var status = answered
      try Board.waitFor("Storage not available on screen") {
        status = try Board.status()
        return status["screen"] as? String == "Storage not available"
      }
      #expect(status["recording"] as? Bool == false)
      let log = try Board.logs(name)
      #expect(log.contains("kioskcam: movie stopped: storage lost"), "\(log)")

      try Card.card("back")
      try Board.waitFor("the card back") { try Board.logs(name).contains("kioskcam: storage back: ") }
      try Board.waitFor("the cut-off recording published") { try Board.logs(name).contains("kioskcam: movie \(movie) recovered") }
      #expect(try Board.run("\(Board.binary) mode still").status == 0)
      try press(name, expecting: "DCIM/100KIOSK/IMG_0002.JPG")
    }
    let kept = try expectCardRoll([movie, "DCIM/100KIOSK/IMG_0002.JPG"], movie: movie)
    print("card pulled: the movie kept \(kept.frames) frames, \(kept.seconds) s")
    #expect(kept.recovered && kept.frames > 0)
  }
}
