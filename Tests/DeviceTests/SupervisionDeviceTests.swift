import Foundation
import Testing

extension BoardDeviceTests {
  /// sd_notify on the board: first the datagrams themselves, read by a small receiver in systemd's place; then
  /// the shipped unit under the guest's real systemd (board/virtual/guest-systemd.sh): its sandbox tried from
  /// the inside, its watchdog restart, and (in the appliance test) its clean stop during a recording.
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
      try Board.waitOnShare("the receiver") { try Board.logs("notify").hasPrefix("listening") }
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

    /// What board/virtual/sandbox-probe.py printed: attempt name to "ok" or "refused ERRNO" (the first run in
    /// `output` only), and its status lines.
    static func probe(_ output: String) -> (verdicts: [String: String], status: [String]) {
      var verdicts: [String: String] = [:]
      var status: [String] = []
      for line in output.split(separator: "\n") {
        guard let range = line.range(of: "sandbox-probe: ") else { continue }
        let words = line[range.upperBound...].split(separator: " ", maxSplits: 1).map(String.init)
        guard words.count == 2 else { continue }
        if words[0] == "status" {
          status.append(words[1])
        } else if verdicts[words[0]] == nil {
          verdicts[words[0]] = words[1]
        }
      }
      return (verdicts, status)
    }

    @Test func theShippedUnitIsSandboxedBySystemdAndAStalledCameraIsRestartedByIt() throws {
      _ = try Puller.installAppliance()
      // A test-only drop-in: the probe as ExecStartPost= runs with everything the unit sets for its processes
      // (user, mount namespace, device policy, seccomp), as every Exec line of a unit does. The watchdog is the
      // shipped unit's own (WatchdogSec=10s).
      let dropIns = "/run/kioskcam-board/systemd/kioskcam.service.d"
      // A copy under /run: the repository may be anywhere, and under /tmp (PrivateTmp=) or /home and /root
      // (ProtectHome=) the sandbox rightly hides it from the unit.
      let probe = "/run/kioskcam-board/sandbox-probe.py"
      let prepared = try Board.run(
        "mkdir -p \(dropIns) && install -m 0755 \(Board.repository)/board/virtual/sandbox-probe.py \(probe)"
          + " && printf '[Service]\\nExecStartPost=/usr/bin/python3 \(probe)\\n' > \(dropIns)/50-sandbox-probe.conf"
          // A folder the service's user owns outside ReadWritePaths=, and a file in the guest's own /tmp.
          + " && install -d -o kioskcam -g kioskcam /var/lib/kioskcam-sandbox-probe && touch /tmp/kioskcam-sandbox-probe-marker"
          + " && find \(Puller.roll) -mindepth 1 -delete")
      try #require(prepared.status == 0, "\(prepared.stderr)")
      defer {
        _ = try? Board.run("rm -f \(dropIns)/50-sandbox-probe.conf")
        _ = try? Board.systemd("systemctl daemon-reload")
      }
      // Whatever happens here, the next test finds vivid delivering every frame and the camera free.
      defer { _ = try? Board.run("v4l2-ctl -d /dev/video0 -c percentage_of_dropped_buffers=0") }
      let service = try Service.start()
      defer { _ = try? Service.systemctl("stop kioskcam.service") }

      // Inside the sandbox each break-out is refused by the sandbox; outside it, as the same user, it works.
      let inside = Self.probe(try service.journal())
      #expect(
        inside.verdicts == [
          "write-roll": "ok", "write-runtime-directory": "ok", "write-outside": "refused EROFS", "write-etc": "refused EROFS",
          "see-host-tmp": "refused ENOENT", "write-tmp": "ok", "list-home": "refused EACCES", "open-video0": "ok",
          "open-fuse": "refused EPERM", "socket-unix": "ok", "socket-inet": "refused EAFNOSUPPORT",
          "socket-inet6": "refused EAFNOSUPPORT", "socket-netlink": "refused EAFNOSUPPORT",
        ], "\(inside.verdicts)")
      #expect(inside.status.contains("NoNewPrivs: 1") && inside.status.contains("Seccomp: 2"), "\(inside.status)")
      #expect(inside.status.contains("CapBnd: 0000000000000000"), "\(inside.status)")
      let outsideRun = try Board.run("setpriv --reuid=kioskcam --regid=kioskcam --init-groups python3 \(probe)")
      let outside = Self.probe(outsideRun.stdout)
      for name in inside.verdicts.keys.sorted() where name != "write-etc" {
        #expect(outside.verdicts[name] == "ok", "\(name) as kioskcam outside the sandbox: \(outsideRun.stdout)")
      }
      // /etc is the root's to write anyway; inside, the read-only mount answers before the file mode does.
      #expect(outside.verdicts["write-etc"] == "refused EACCES", "\(outsideRun.stdout)")
      // The service process itself, not only its ExecStartPost sibling: filtered system calls, no new privileges.
      let status = try Board.systemd("grep -E '^(NoNewPrivs|Seccomp):' /proc/\(service.mainPID)/status").stdout
      #expect(status.contains("NoNewPrivs:\t1") && status.contains("Seccomp:\t2"), "\(status)")

      // The watchdog: vivid keeps every buffer, the service stops petting, and systemd (not the test) kills it
      // and starts it again. The restart is observed in systemd's counters and words, and a new main process.
      let before = try Board.unitProperties("kioskcam.service", ["WatchdogUSec", "NRestarts", "ActiveState"])
      #expect(before == ["WatchdogUSec": "10s", "NRestarts": "0", "ActiveState": "active"], "\(before)")
      let stalled = try Board.run("v4l2-ctl -d /dev/video0 -c percentage_of_dropped_buffers=100")
      try #require(stalled.status == 0, "\(stalled.stderr)")
      try Board.waitFor("systemd to restart the service", seconds: 300) {
        try Board.unitProperties("kioskcam.service", ["NRestarts"])["NRestarts"] == "1"
      }
      let resumed = try Board.run("v4l2-ctl -d /dev/video0 -c percentage_of_dropped_buffers=0")
      try #require(resumed.status == 0, "\(resumed.stderr)")
      try Board.waitFor("the restarted service to be ready", seconds: 300) {
        try Board.unitProperties("kioskcam.service", ["ActiveState"])["ActiveState"] == "active"
      }
      let after = try Board.unitProperties("kioskcam.service", ["MainPID", "NRestarts"])
      #expect(after["NRestarts"] == "1" && after["MainPID"] != service.mainPID, "\(after), first \(service.mainPID)")
      let log = try service.journal()
      for words in [
        "kioskcam.service: Watchdog timeout (limit 10s)!", "kioskcam.service: Failed with result 'watchdog'.",
        "kioskcam.service: Scheduled restart job, restart counter is at 1.",
      ] {
        #expect(log.contains(words), "systemd said: \(words)")
      }
      #expect(log.components(separatedBy: "kioskcam: ready").count - 1 == 2, "ready twice: \(log)")

      // Back to work: a photo through the control socket, complete by jpeginfo's reckoning.
      let shot = try Board.run("/usr/bin/kioskcam shutter")
      #expect(shot.status == 0, "\(shot.stderr)")
      try Board.waitFor("the still") { try service.journal().contains("kioskcam: still DCIM/") }
      let copied = try Board.run(
        "cp \(Puller.roll)/DCIM/100KIOSK/IMG_0001.JPG \(Board.share!)/restarted.jpg && chmod 0644 \(Board.share!)/restarted.jpg")
      try #require(copied.status == 0, "\(copied.stderr)")
      let jpeginfo = try Board.host(["/usr/bin/jpeginfo", "-c", "\(Board.share!)/restarted.jpg"])
      #expect(jpeginfo.status == 0 && jpeginfo.stdout.contains("OK"), "\(jpeginfo.stdout)")

      let stopped = try Service.systemctl("stop kioskcam.service")
      #expect(stopped.status == 0, "\(stopped.stderr)")
      #expect(try Board.unitProperties("kioskcam.service", ["Result"])["Result"] == "success")
    }
  }
}

extension BoardDeviceTests.Supervision {
  /// The unit's restart policy as systemd reads it, and as it acts: a configuration error fails the unit once
  /// (exit 78 of the service itself) and is not restarted, where Restart=on-failure alone would try every 2 s
  /// (and did, while check-config's 78 came from ExecStartPre: systemd's RestartPreventExitStatus= reads the
  /// main process's status only); TimeoutAbortSec=10s, which the watchdog's SIGABRT needs (docs/appliance.md).
  /// The appliance's files in the guest as another test of this run put them there (a minute under emulation),
  /// or put there now.
  static func applianceInstalled() throws {
    if try Board.run("test -x /usr/bin/kioskcam && id kioskcam && test -s /etc/kioskcam/kioskcam.conf").status == 0 { return }
    _ = try BoardDeviceTests.Puller.installAppliance()
  }

  @Test func aConfigurationErrorIsNotRestartedBySystemd() throws {
    try Self.applianceInstalled()
    try Board.startSystemd()
    typealias Service = BoardDeviceTests.Service
    let policy = try Board.unitProperties(
      "kioskcam.service", ["Restart", "RestartUSec", "RestartPreventExitStatus", "TimeoutAbortUSec"])
    #expect(
      policy == ["Restart": "on-failure", "RestartUSec": "2s", "RestartPreventExitStatus": "64 78", "TimeoutAbortUSec": "10s"],
      "\(policy)")

    let saved = "/run/kioskcam-board/kioskcam.conf.saved"
    let broken = try Board.run(
      "mkdir -p /run/kioskcam-board && cp /etc/kioskcam/kioskcam.conf \(saved) && printf '[camera]\\nsize = huge\\n' > /etc/kioskcam/kioskcam.conf")
    try #require(broken.status == 0, "\(broken.stderr)")
    defer {
      _ = try? Board.run("cp \(saved) /etc/kioskcam/kioskcam.conf")
      _ = try? Service.systemctl("stop kioskcam.service")
      _ = try? Service.systemctl("reset-failed kioskcam.service")
    }
    _ = try Service.systemctl("stop kioskcam.service")
    _ = try Service.systemctl("reset-failed kioskcam.service")
    let shown = try Board.systemd("journalctl -n 1 --show-cursor --no-pager -o cat")
    let cursor = try #require(shown.stdout.components(separatedBy: "-- cursor: ").last?.trimmingCharacters(in: .whitespacesAndNewlines))
    let started = try Service.systemctl("start kioskcam.service")
    #expect(started.status != 0, "a configuration error fails the start: \(started.stdout)")
    // Three restart intervals: a restart would have come twice by then.
    Thread.sleep(forTimeInterval: 6)
    let after = try Board.unitProperties("kioskcam.service", ["ActiveState", "Result", "NRestarts", "ExecMainStatus"])
    #expect(after == ["ActiveState": "failed", "Result": "exit-code", "NRestarts": "0", "ExecMainStatus": "78"], "not restarted: \(after)")
    let journal = try Board.systemd("journalctl -u kioskcam.service --no-pager -o cat --after-cursor='\(cursor)'").stdout
    let words = "kioskcam: /etc/kioskcam/kioskcam.conf:2: camera.size: expected WIDTHxHEIGHT such as 640x360, got 'huge'"
    #expect(journal.contains(words), "the configuration's problem in the journal: \(journal)")
    #expect(!journal.contains("Scheduled restart job"), "\(journal)")
  }

  /// The shipped init script for images without systemd, run as BusyBox init runs it (`S90kioskcam start`, then
  /// `stop`), by BusyBox's own shell with BusyBox's applets (start-stop-daemon, install) first on the PATH:
  /// the service runs as kioskcam with its socket folder, the pid file names kioskcam itself, and stop waits
  /// for it to finish.
  @Test func theBusyBoxInitScriptStartsAndStopsTheService() throws {
    try Self.applianceInstalled()
    let script = "\(Board.repository)/rootfs-overlay/etc/init.d/S90kioskcam"
    let applets = "/run/kioskcam-board/busybox"
    let prepared = try Board.run(
      "mkdir -p \(applets) && busybox --install -s \(applets) && rm -f /var/log/kioskcam.log /run/kioskcam.pid")
    try #require(prepared.status == 0, "\(prepared.stderr)")
    func initScript(_ action: String) throws -> Board.Output {
      try Board.run("cd / && PATH=\(applets):$PATH busybox sh \(script) \(action)", timeout: 120)
    }
    defer { _ = try? initScript("stop") }
    let start = try initScript("start")
    #expect(start.status == 0 && start.stdout == "Starting kioskcam: OK\n", "\(start.stdout) \(start.stderr)")
    try Board.waitFor("the service's ready line in its log") {
      try Board.run("cat /var/log/kioskcam.log").stdout.contains("kioskcam: ready")
    }
    let pid = try Board.run("cat /run/kioskcam.pid").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    let process = try Board.run("ps -o user=,comm= -p \(pid); stat -c %U:%a /run/kioskcam").stdout
    #expect(process.split(whereSeparator: \.isWhitespace) == ["kioskcam", "kioskcam", "kioskcam:750"], "\(process)")
    let shot = try Board.run("/usr/bin/kioskcam shutter")
    #expect(shot.status == 0 && shot.stdout == "ok\n", "\(shot.stdout) \(shot.stderr)")
    try Board.waitFor("the still") { try Board.run("cat /var/log/kioskcam.log").stdout.contains("kioskcam: still DCIM/") }

    let stop = try initScript("stop")
    #expect(stop.status == 0 && stop.stdout == "Stopping kioskcam: OK\n", "\(stop.stdout) \(stop.stderr)")
    #expect(try Board.run("test -d /proc/\(pid)").status != 0, "gone once stop returned")
    let log = try Board.run("cat /var/log/kioskcam.log").stdout
    #expect(log.contains("kioskcam: signal 15: stopping") && log.contains("kioskcam: peak resident memory"), "\(log)")
  }
}
