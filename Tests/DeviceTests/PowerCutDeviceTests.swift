import Foundation
import Testing

/// Power cuts at every point that matters (xfstests' generic/482 method): dm-log-writes records every write,
/// flush and FUA of a session on the card; board/virtual/replay-log-writes.py rebuilds the card as it stood at
/// chosen points, and at each board/virtual/guest-cut-check.sh runs fsck, mounts, starts the service (its
/// start-up recovery) and checks the roll. In the serialized board suite: the session holds the camera.
extension BoardDeviceTests {
  /// One point of the replay as the check found it.
  struct CutPoint: Decodable {
    struct Check: Decodable {
      let fsck: Int?
      /// host-cut-check.sh: 2 when fsck.fat needed a second pass to leave the card clean.
      let fsck_passes: Int?
      let recovery: String?
      let roll: RollCheck?
      let error: String?
    }
    let point: Int
    let flags: String
    let mark: String?
    let status: Int
    let check: Check
  }
}

extension BoardSuite {
  /// A session on a card recorded from its mkfs on: `stills` presses, a movie, another killed (SIGKILL)
  /// mid-recording and published by the next start, a still after. After each item is published (its log
  /// line), a mark `after:FILE` goes into the log: from there on, a cut must keep FILE. Returns the config
  /// and the files the session published, in order.
  func recordSession(_ name: String, fileSystem: String, stills: Int) throws -> (config: String, files: [String]) {
    try Card.card("record \(fileSystem)")
    let (config, _) = try movieConfig(name, edit: Card.roll(name))
    var files: [String] = []
    func published(_ file: String) throws {
      files.append(file)
      try Card.card("mark after:\(file)")
    }
    func still() throws {
      let file = "DCIM/100KIOSK/IMG_\(String(format: "%04d", files.count + 1)).JPG"
      try press(name, expecting: file)
      try published(file)
    }
    try Board.withService(name, config: config) {
      for _ in 0..<stills { try still() }
      _ = try startRecording(name)
      Thread.sleep(forTimeInterval: 2)
      #expect(try Board.control("shutter").status == 0)
      try Board.waitOnShare("the movie") { Card.movies(in: try Board.logs(name)).count == 1 }
      try published(Card.movies(in: try Board.logs(name))[0])
      _ = try startRecording(name)
      try Board.waitFor("the first frame") {
        try Board.logs(name).split(separator: "\n").filter { $0.contains("movie first frame") }.count == 2
      }
      Thread.sleep(forTimeInterval: 1.5)
      try Board.kill(name, signal: "KILL")
    }
    try Board.withService(name, config: config) {
      let log = try Board.logs(name)
      let recovered = Card.movies(in: log)
      try #require(recovered.count == 1, "the killed recording recovered at the start: \(log)")
      try published(recovered[0])
      _ = try Board.control("mode still")
      try still()
    }
    try Card.card("unrecord")
    return (config, files)
  }

  /// Replays the card's log at `points` (replay-log-writes.py's --points, --limit) and checks each.
  func replayCuts(_ config: String, fileSystem: String, points: String, limit: Int) throws -> [BoardDeviceTests.CutPoint] {
    try Card.card("replay-reset")
    let check = "CONF=\(config) KIOSKCAM=\(Board.binary) FS=\(fileSystem) sh board/virtual/guest-cut-check.sh"
    let replay = try Board.run(
      "/usr/bin/python3 board/virtual/replay-log-writes.py replay /dev/mapper/card-log /dev/mapper/card-replay "
        + "--start-mark mkfs --points \(points) --limit \(limit) --check '\(check)'", timeout: 36000)
    let lines = replay.stdout.split(separator: "\n")
    print("power cut: \(lines.first ?? "no output") \(replay.stderr)")
    return try lines.dropFirst().map { try JSONDecoder().decode(BoardDeviceTests.CutPoint.self, from: Data($0.utf8)) }
  }

  /// Replays the card's log on the host (board/virtual/host-cut-check.sh: fsck, the files read out without a
  /// mount, `kioskcam roll recover`, guest-roll-check.py), the guest idle: the log is read where it lies in the
  /// board's disk image and each point checked on a sparse copy of the replayed card, two at a time.
  func replayCutsOnHost(fileSystem: String, points: String, limit: Int, recovery: String = Board.hostBinary) throws -> [BoardDeviceTests.CutPoint] {
    let state = try #require(Board.stateDirectory)
    let work = "\(state)/cuts-\(fileSystem)"
    try? FileManager.default.removeItem(atPath: work)
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: work) }
    // The replay target starts as the card did before `guest-card.sh record`: zeroed, the card's size.
    let target = "\(work)/card.img"
    try #require(FileManager.default.createFile(atPath: target, contents: nil))
    try #require(truncate(target, off_t(Card.cardBytes)) == 0)
    let check = "FS=\(fileSystem) KIOSKCAM=\(recovery) VERDICTS=\(work)/verdicts sh \(Board.repository)/board/virtual/host-cut-check.sh"
    let replay = try Board.host(
      [
        "/usr/bin/python3", "\(Board.repository)/board/virtual/replay-log-writes.py", "replay",
        "\(state)/card.img@\(Card.logOffset)", target, "--start-mark", "mkfs", "--points", points, "--limit", "\(limit)",
        "--copies", work, "--jobs", "2", "--check", check,
      ], timeout: 3600)
    let lines = replay.stdout.split(separator: "\n")
    print("power cut on the host: \(lines.first ?? "no output") \(replay.stderr)")
    return try lines.dropFirst().map { try JSONDecoder().decode(BoardDeviceTests.CutPoint.self, from: Data($0.utf8)) }
  }

  /// The roll's promises at every cut: fsck repaired or clean and then clean, the card mounts, the service
  /// starts, every visible file whole, nothing hidden left after the start, each record agreeing with its
  /// file, every file the session published before the point's mark there with it, and no number ever
  /// naming anything but what the session gave it. Prints a line for each point that found anything.
  func expectSound(_ cuts: [BoardDeviceTests.CutPoint], published files: [String], _ label: String) {
    #expect(!cuts.isEmpty, "\(label): no point replayed")
    var repaired = 0
    var secondPasses = 0
    for cut in cuts {
      let roll = cut.check.roll
      let promised = cut.mark.flatMap { mark in
        files.firstIndex { "after:\($0)" == mark }.map { Array(files[...$0]) }
      } ?? []
      let visible = roll?.visible.map(\.file) ?? []
      var found: [String] = []
      if cut.status != 0 || cut.check.error != nil { found.append("check failed: \(cut.check.error ?? "status \(cut.status)")") }
      found += roll?.problems ?? []
      if let hidden = roll?.hidden, !hidden.isEmpty { found.append("hidden after the start: \(hidden)") }
      let lost = promised.filter { !visible.contains($0) }
      if !lost.isEmpty { found.append("published before the cut, gone: \(lost)") }
      let strangers = visible.filter { !files.contains($0) }
      if !strangers.isEmpty { found.append("a number the session used for something else: \(strangers)") }
      if (cut.check.fsck ?? 0) > 0 { repaired += 1 }
      if (cut.check.fsck_passes ?? 1) > 1 { secondPasses += 1 }
      if !found.isEmpty || !(cut.check.recovery ?? "").isEmpty {
        print("power cut \(label): point \(cut.point) \(cut.flags) after \(cut.mark ?? "-"): fsck \(cut.check.fsck ?? -1), "
          + "visible \(visible.count), recovery [\(cut.check.recovery ?? "")]\(found.isEmpty ? "" : ", FOUND \(found)")")
      }
      #expect(found.isEmpty, "\(label) point \(cut.point) \(cut.flags) after \(cut.mark ?? "-"): \(found)")
    }
    print(
      "power cut \(label): \(cuts.count) points replayed, fsck repaired \(repaired) (a second pass at \(secondPasses)), "
        + "session \(files)")
  }

  /// The stills a service's log says it published, in order.
  func stillsLogged(_ log: String) -> [String] {
    log.split(separator: "\n").compactMap { line in
      guard line.contains("kioskcam: still DCIM/") else { return nil }
      let words = line.split(separator: " ")
      return words.firstIndex(of: "still").map { String(words[$0 + 1]) }
    }
  }
}

extension BoardDeviceTests.Storage {
  /// A session replayed on the host: in `make test` a short one (two stills, the movies) at 20 points spread
  /// over its flushes, FUAs and marks and ten random writes; in `make storage-test` a session of 20 stills at
  /// every flush, FUA and mark and 100 random writes (xfstests' generic/482 set), on ext4 and on vfat. The ext4
  /// session is replayed in the guest too, at two random points, each checked by the guest's own fsck, mount and
  /// the service's start-up recovery (guest-cut-check.sh), which the host's check does not exercise: one
  /// recording serves both (a recording costs most of the test on the emulated board).
  @Test(arguments: ["ext4", "vfat"])
  func aPowerCutReplayedOnTheHostAndInTheGuestLeavesAWholeRoll(fileSystem: String) throws {
    let (config, files) = try recordSession("cut\(fileSystem)", fileSystem: fileSystem, stills: Card.full ? 20 : 2)
    let started = Date()
    let cuts = try replayCutsOnHost(
      fileSystem: fileSystem, points: Card.full ? "all" : "flushes,random:10", limit: Card.full ? 0 : 20)
    expectSound(cuts, published: files, "\(fileSystem) on the host")
    let seconds = Date().timeIntervalSince(started)
    print(String(format: "power cut on the host: %@: %d points in %.0f s, %.3f s a point", fileSystem, cuts.count, seconds, seconds / Double(max(cuts.count, 1))))
    // The replay can fail: the same points with the recovery left out (`true` for the binary) must find the
    // hidden files a cut leaves somewhere.
    let unrecovered = try replayCutsOnHost(fileSystem: fileSystem, points: "flushes,random:10", limit: 20, recovery: "/bin/true")
    let caught = unrecovered.filter { !($0.check.roll?.hidden ?? []).isEmpty }
    #expect(!caught.isEmpty, "\(fileSystem): without the recovery no point found anything hidden")
    print("power cut on the host: \(fileSystem): without the recovery \(caught.count) of \(unrecovered.count) points keep hidden files")
    if fileSystem == "ext4" {
      // The host's replays only read the log; the guest's rebuilds its own target from it.
      let inGuest = try replayCuts(config, fileSystem: fileSystem, points: "random:2", limit: 2)
      expectSound(inGuest, published: files, "\(fileSystem) in the guest")
    }
  }
}

extension BoardDeviceTests.Storage.BoardPowerCut {
  /// The board's power cut end to end: the host kills QEMU with SIGKILL (`board power-cut`; the card is
  /// write-back cached, so what the guest had not flushed is lost), in rounds of two: right after a press, and
  /// mid-recording; three rounds on ext4 and two on vfat, ten cuts. Each next boot fsck's the card and mounts it
  /// (guest-card.sh init), the service starts (its recovery), and the roll's invariants hold: fsck clean or
  /// repaired, everything visible whole, nothing hidden after the start, no number twice across every cut,
  /// every item published before a cut there, each interrupted recording published (recovered) at most a
  /// second short of the cut, records agreeing with the files. On vfat a still published seconds before the cut
  /// must be whole, where a rename's new directory entry gets the file's size only when its inode is written
  /// back. Minutes a cut on the emulated board: `make storage-test`.
  @Test(.enabled(if: Card.full, "make storage-test runs it"), arguments: [("ext4", 3), ("vfat", 2)])
  func aPowerCutOfTheWholeBoardLeavesAWholeRoll(fileSystem: String, rounds: Int) throws {
    try Card.format(fileSystem)
    let name = "qemucut\(fileSystem)"
    let (config, _) = try movieConfig(name, edit: Card.roll(name))
    func cut() throws {
      let killed = try Board.host([Board.cli, "power-cut"])
      try #require(killed.status == 0, "\(killed.stderr)")
      let booted = try Board.host([Board.cli, "start"], timeout: 900)
      try #require(booted.status == 0, "\(booted.stdout) \(booted.stderr)")
      print("power cut: \(try Board.run("cat /run/kioskcam-card.state").stdout.split(separator: "\n").joined(separator: ", "))")
    }
    /// Every file seen so far and its size: each later cut must leave it there, the same size (a number used
    /// again, or a published file torn or replaced, shows here).
    var seen: [String: Int] = [:]
    func expectWhole(_ label: String) throws -> RollCheck {
      let found = try Card.check()
      let visible = Dictionary(found.visible.map { ($0.file, $0.bytes) }, uniquingKeysWith: { first, _ in first })
      #expect(found.problems.isEmpty && found.hidden.isEmpty, "\(label): \(found)")
      #expect(visible.count == found.visible.count, "\(label): a name twice: \(found.visible.map(\.file))")
      for (file, bytes) in seen.sorted(by: { $0.key < $1.key }) {
        #expect(visible[file] == bytes, "\(label): \(file) was \(bytes) bytes, now \(visible[file].map(String.init) ?? "gone")")
      }
      seen.merge(visible) { old, _ in old }
      return found
    }
    for round in 1...rounds {
      // Mid-still: a still published, then a press and the power cut at once.
      let still = try Board.withService(name, config: config) { () throws -> String? in
        try Board.click("shutter")
        var still: String?
        try Board.waitFor("a still published") {
          still = stillsLogged(try Board.logs(name)).first
          return still != nil
        }
        try Board.click("shutter")
        try cut()
        return still
      }
      let afterStill = try expectWhole("\(fileSystem) round \(round), cut mid-still").visible.map(\.file)
      #expect(still.map(afterStill.contains) == true, "\(still ?? "?") published before the cut: \(afterStill)")
      // Mid-recording: the next start publishes what was fsynced.
      let (killedAt, firstFrame) = try Board.withService(name, config: config) { () throws -> (Double, Double) in
        _ = try startRecording(name)
        try Board.waitOnShare("the first frame") { try Board.logs(name).contains("movie first frame") }
        Thread.sleep(forTimeInterval: 3)
        let first = try #require(
          try Board.logs(name).split(separator: "\n").first { $0.contains("kioskcam: movie first frame") }?.split(separator: " ")
            .last.flatMap { Double($0) })
        let at = try Board.guestClock()
        try cut()
        return (at, first)
      }
      let movie = try Board.withService(name, config: config) { () throws -> String in
        let log = try Board.logs(name)
        let line = try #require(log.split(separator: "\n").first { $0.hasPrefix("kioskcam: movie DCIM/") && $0.contains(" recovered, ") }, "\(log)")
        return String(line.split(separator: " ")[2])
      }
      let found = try expectWhole("\(fileSystem) round \(round), cut mid-recording")
      let records = try Board.run("cat \(Card.mount)/.kioskcam-items.jsonl").stdout.split(separator: "\n")
      let line = try #require(records.first { $0.contains("\"file\":\"\(movie)\"") }, "\(records)")
      let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      #expect(found.visible.first { $0.file == movie }?.frames == record["frames"] as? Int, "ffprobe's count is the record's")
      let seconds = record["durationSeconds"] as? Double ?? 0
      // The cut came after the guest's clock was read: at most a second short of that.
      print("power cut \(fileSystem) round \(round): the movie kept \(seconds) s of at least \(killedAt - firstFrame) s recorded; roll \(found.visible.map(\.file))")
      #expect(seconds >= killedAt - firstFrame - 1.0, "at most a second lost")
      // And the cut landed when the test asked for it (the host's command, a round trip after the clock was
      // read): a movie much longer than that was cut later than the test thinks.
      #expect(seconds <= killedAt - firstFrame + 3.0, "the power cut came \(seconds - (killedAt - firstFrame)) s after the clock was read")
    }
  }
}
