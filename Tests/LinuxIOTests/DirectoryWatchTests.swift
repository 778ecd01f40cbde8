import Foundation
import LinuxIO
import Testing

/// inotify on a folder of the test's own, laid out like udev's `/dev/v4l/by-id`: made with a USB camera's first
/// link, removed with its last.
struct DirectoryWatchTests {
  /// Runs the loop until `done` says so, or 20 s have passed (a pipe written from another thread wakes it).
  func run(_ loop: EventLoop, until done: @escaping () -> Bool) throws {
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    defer { close(ends[0]); close(ends[1]) }
    try loop.watch(FileDescriptor(rawValue: ends[0])) { _ in loop.stop() }
    defer { loop.unwatch(FileDescriptor(rawValue: ends[0])) }
    let writer = ends[1]
    let watchdog = Thread {
      Thread.sleep(forTimeInterval: 20)
      var byte: UInt8 = 1
      _ = write(writer, &byte, 1)
    }
    watchdog.start()
    if !done() { try loop.run() }
    watchdog.cancel()
  }

  @Test func aWantedFolderMadeLaterAndMadeAgainIsFollowed() throws {
    let base = NSTemporaryDirectory() + "kioskcam-watch-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: base) }
    let byID = "\(base)/v4l/by-id"
    let loop = try EventLoop()
    var seen: [String] = []
    var want = 0
    let watch = try DirectoryWatch(loop: loop, directories: [byID]) { directory, name in
      seen.append("\(directory)/\(name)")
      if seen.count >= want { loop.stop() }
    }
    #expect(watch.watched.isEmpty, "not there yet")

    // Made with its first link before the loop looks: the link is reported from the listing.
    try FileManager.default.createDirectory(atPath: byID, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(atPath: "\(byID)/usb-cam-video-index0", withDestinationPath: "../../video2")
    want = 1
    try run(loop) { seen.count >= 1 }
    #expect(seen == ["\(byID)/usb-cam-video-index0"])
    #expect(watch.watched == [byID])

    // Removed with its last link and made again: followed again, and a link made later is an event.
    try FileManager.default.removeItem(atPath: byID)
    try FileManager.default.createDirectory(atPath: byID, withIntermediateDirectories: true)
    want = 2
    try FileManager.default.createSymbolicLink(atPath: "\(byID)/usb-cam-video-index1", withDestinationPath: "../../video3")
    try run(loop) { seen.count >= 2 }
    #expect(seen == ["\(byID)/usb-cam-video-index0", "\(byID)/usb-cam-video-index1"])
  }
}
