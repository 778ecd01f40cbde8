import Foundation
import Testing

extension BoardDeviceTests {
  /// sd_notify on the board: the service talks to a datagram socket in the guest the way it talks to systemd.
  /// No systemd runs in the guest, so a small receiver plays its part and the test reads what it got.
  @Suite struct Supervision {
    /// Prints each datagram, then a line `--`: the log is the supervisor's view, one state change at a time.
    static let receiver = """
      import socket, sys
      s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
      s.bind(b'\\0kioskcam-notify-test')
      print('listening\\n--', flush=True)
      while True:
          print(s.recv(4096).decode() + '\\n--', flush=True)
      """

    static func datagrams() throws -> [String] {
      // The first part is the receiver's own "listening"; the last, after the final "--", is empty.
      try Board.logs("notify").components(separatedBy: "\n--\n").dropFirst().map {
        $0.trimmingCharacters(in: .whitespacesAndNewlines)
      }.filter { !$0.isEmpty }
    }

    @Test func readyAfterTheFirstFrameShownWatchdogOnlyWhileFramesArriveAndStopping() throws {
      let (config, _) = try Board.makeConfig(name: "notify")
      try Board.spawn("notify", ["python3", "-c", Self.receiver])
      defer { _ = try? Board.kill("notify") }
      try Board.waitFor("the receiver") { try Board.logs("notify").hasPrefix("listening") }
      // Whatever happens here, the next test finds vivid delivering every frame.
      defer { _ = try? Board.run("v4l2-ctl -d /dev/video0 -c percentage_of_dropped_buffers=0") }
      // A 4 s watchdog: pets every 2 s, as systemd's WatchdogSec=4 would ask.
      try Board.spawn(
        "notified",
        ["env", "NOTIFY_SOCKET=@kioskcam-notify-test", "WATCHDOG_USEC=4000000", Board.binary, "run", "--config", config])
      defer { _ = try? Board.kill("notified") }

      try Board.waitFor("READY=1") { try Self.datagrams().contains { $0.hasPrefix("READY=1") } }
      let ready = try #require(try Self.datagrams().first { $0.hasPrefix("READY=1") })
      #expect(ready == "READY=1\nSTATUS=streaming, preview on the display")
      // READY waits for a completed flip, so the display has shown a frame by then.
      #expect(try Board.logs("notified").contains("kioskcam: ready"))
      try Board.waitFor("two watchdog pets") { try Self.datagrams().filter { $0 == "WATCHDOG=1" }.count >= 2 }

      // vivid keeps every buffer: the camera is open and streams nothing, the stall the watchdog is for.
      // (A stall status before the first frame, under a slow emulated start, is not this one.)
      let before = try Self.datagrams().count
      let stalled = try Board.run("v4l2-ctl -d /dev/video0 -c percentage_of_dropped_buffers=100")
      try #require(stalled.status == 0, "\(stalled.stderr)")
      let stallStatus = "STATUS=camera stalled: no frame since the last watchdog period, watchdog not petted"
      try Board.waitFor("the stall reported") { try Self.datagrams()[before...].contains(stallStatus) }
      // Two more pet periods of the guest's clock: a systemd supervisor would have restarted the service by now.
      _ = try Board.run("sleep 4")
      let resumed = try Board.run("v4l2-ctl -d /dev/video0 -c percentage_of_dropped_buffers=0")
      try #require(resumed.status == 0, "\(resumed.stderr)")
      try Board.waitFor("streaming again") {
        let all = try Self.datagrams()
        guard let stall = all[before...].firstIndex(of: stallStatus) else { return false }
        return all[stall...].contains("STATUS=streaming")
      }
      let all = try Self.datagrams()
      let stall = all[before...].firstIndex(of: stallStatus)!
      let back = all[stall...].firstIndex(of: "STATUS=streaming")!
      #expect(!all[stall..<back].contains("WATCHDOG=1"), "no pet while stalled: \(all)")
      try Board.waitFor("pets again") { try Self.datagrams()[back...].contains("WATCHDOG=1") }

      let stopped = try Board.kill("notified")
      #expect(stopped.stdout.contains("exited 0"), "\(stopped.stdout)")
      #expect(try Self.datagrams().last == "STOPPING=1\nSTATUS=stopping")
      #expect(try Self.datagrams().filter { $0.hasPrefix("READY=1") }.count == 1)
    }
  }
}
