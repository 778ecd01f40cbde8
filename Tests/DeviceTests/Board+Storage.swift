import Foundation
import Testing

/// The board's memory card (board/virtual/guest-card.sh): a virtio-blk disk under device-mapper in the guest,
/// mounted at `Card.mount`, which is the roll of the tests that use it. Only the guest sees it, so its files
/// are judged there, by the same peers (jpeginfo, ffmpeg, ffprobe: the guest runs the host's binaries).
enum Card {
  static let mount = "/run/kioskcam-card"
  /// `make storage-test` sets it: the long storage tests run only there, and the card tests on both file systems.
  static let full = ProcessInfo.processInfo.environment["KIOSKCAM_STORAGE_TESTS"] == "full"
  /// Where the card's parts lie in the board's disk image (kioskboard/disk.py: CARD_MB, LOG_MB; guest-card.sh):
  /// the card, its replay target, then dm-log-writes' log.
  static let cardBytes = 128 << 20
  static let logOffset = 2 * cardBytes

  /// What a card test that holds on either file system runs on: ext4 (as the appliance ships) and vfat (as cards
  /// are sold) in `make storage-test`; in `make test` vfat alone, where make test's other card tests are ext4.
  static let fileSystems = full ? ["ext4", "vfat"] : ["vfat"]

  /// Runs `guest-card.sh arguments` in the guest; a card command that fails fails the test.
  @discardableResult
  static func card(_ arguments: String, timeout: Int = 300) throws -> String {
    let result = try Board.run("sh board/virtual/guest-card.sh \(arguments)", timeout: timeout)
    guard result.status == 0 else { throw BoardFailure("guest-card.sh \(arguments): \(result.status) \(result.stderr)") }
    return result.stdout
  }

  /// A healthy card with a fresh, empty file system: `ext4` or `vfat`.
  static func format(_ fileSystem: String) throws { try card("format \(fileSystem)") }

  /// `name`'s configuration with the roll on the card: the card's mount point, which must be one
  /// (`mount = mount-point`: with the card gone, the empty folder under it is not the roll).
  static func config(_ name: String, edit: @escaping (String) -> String = { $0 }) throws -> String {
    try Board.makeConfig(name: name) { roll(name)(edit($0)) }.config
  }

  /// The configuration edit behind `config`, for configurations made elsewhere (`movieConfig`).
  static func roll(_ name: String) -> (String) -> String {
    {
      $0.replacingOccurrences(of: "path = \(Board.share!)/\(name)-roll", with: "path = \(mount)")
        .replacingOccurrences(of: "mount = separate", with: "mount = mount-point")
    }
  }

  /// The roll's invariants by board/virtual/guest-roll-check.py: visible files whole by peers, numbers once,
  /// records agreeing with the files.
  static func check() throws -> RollCheck {
    let result = try Board.run("/usr/bin/python3 board/virtual/guest-roll-check.py \(mount)", timeout: 600)
    guard result.status == 0 else { throw BoardFailure("guest-roll-check.py: \(result.status) \(result.stderr)") }
    return try JSONDecoder().decode(RollCheck.self, from: Data(result.stdout.utf8))
  }

  /// The movies the log says were published, each once (`kioskcam: movie DCIM/... frames N, dropped M, S s`):
  /// MOV or MP4, whichever the writer makes.
  static func movies(in log: String) -> [String] {
    log.split(separator: "\n").compactMap { line -> String? in
      guard line.hasPrefix("kioskcam: movie DCIM/"), line.contains(" frames ") else { return nil }
      return line.split(separator: " ").dropFirst(2).first.map(String.init)
    }
  }
}

/// What guest-roll-check.py found.
struct RollCheck: Decodable {
  struct Visible: Decodable {
    let file: String
    let bytes: Int
    let frames: Int?
  }
  let visible: [Visible]
  let hidden: [String]
  let problems: [String]
  let numbers: [String]
  let unrecorded: [String]
  let records: Int
}

/// `kioskcam status --json`'s counters that the storage tests compare over time.
struct Counters {
  let shown: Int
  let received: Int
  let missing: Int

  static func now() throws -> Counters {
    let status = try Board.status()
    func count(_ key: String) -> Int { (status[key] as? Int) ?? -1 }
    return Counters(shown: count("previewFramesShown"), received: count("framesReceived"), missing: count("framesMissing"))
  }
}
