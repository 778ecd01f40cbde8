import Foundation
import Testing

/// The roll on the board's memory card (Board+Storage.swift): a real block device with a real file system,
/// healthy, slow, failing, pulled and cut off. In the serialized board suite: every test here holds the camera.
extension BoardDeviceTests.Storage {
  /// Stills and a movie onto the card, as cards come formatted (ext4 as the appliance ships, vfat as cards
  /// are sold and read on a PC): every file whole by the peers, numbers once, a record for each. About 36 s
  /// each on the emulated board: both in `make storage-test`, vfat in `make test` (`Card.fileSystems`).
  @Test(arguments: Card.fileSystems)
  func theRollOnTheCardTakesStillsAndAMovie(fileSystem: String) throws {
    try Card.format(fileSystem)
    let name = "card\(fileSystem)"
    let (config, _) = try movieConfig(name, edit: Card.roll(name))
    let log = try Board.withService(name, config: config) {
      try press(name, expecting: "DCIM/100KIOSK/IMG_0001.JPG")
      try press(name, expecting: "DCIM/100KIOSK/IMG_0002.JPG")
      _ = try startRecording(name)
      Thread.sleep(forTimeInterval: 2)
      #expect(try Board.control("shutter").status == 0)
      try Board.waitOnShare("the movie") { !Card.movies(in: try Board.logs(name)).isEmpty }
      return try Board.logs(name)
    }
    let movie = try #require(Card.movies(in: log).first)
    #expect(movie.hasPrefix("DCIM/100KIOSK/IMG_0003."), "\(movie)")
    let found = try Card.check()
    print("card \(fileSystem): \(found.visible.map { "\($0.file) \($0.bytes) B\($0.frames.map { ", \($0) frames" } ?? "")" })")
    #expect(found.problems.isEmpty, "\(found.problems)")
    #expect(found.visible.map(\.file) == ["DCIM/100KIOSK/IMG_0001.JPG", "DCIM/100KIOSK/IMG_0002.JPG", movie])
    #expect(found.hidden.isEmpty && found.unrecorded.isEmpty && found.records == 3, "\(found.hidden) \(found.unrecorded)")
    #expect((found.visible.last?.frames ?? 0) > 1)
    let mounted = try Board.run("findmnt -n -o FSTYPE,SOURCE \(Card.mount)").stdout.split(whereSeparator: \.isWhitespace)
    #expect(mounted == [fileSystem[...], "/dev/mapper/card"], "\(mounted)")
    // The largest file the service finds on the card, where its movies stop: FAT's 4 GiB less a byte, by the
    // kernel's own word on the file system's kind (stat -f: "msdos" for the vfat driver); none on ext4.
    let kind = try Board.run("stat -f -c %T \(Card.mount)").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    let probe = try Board.run("\(Board.binary) probe --json --config \(config)")
    let storage = try JSONDecoder().decode(ProbeJSON.self, from: Data(probe.stdout.utf8)).storage
    #expect(storage.path == Card.mount)
    #expect(storage.largestFile == (kind == "msdos" ? 4_294_967_295 : nil), "stat -f says \(kind)")
    #expect(kind == (fileSystem == "vfat" ? "msdos" : "ext2/ext3"), "stat -f says \(kind)")
  }
}
