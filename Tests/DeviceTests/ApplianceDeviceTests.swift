import Foundation
import Testing

/// The appliance's operating-system side on the board: the shipped accounts, folders, udev rule and sshd
/// drop-in (board/virtual/guest-appliance.sh puts them in place), the shipped unit run by a real systemd in the
/// guest (board/virtual/guest-systemd.sh), and people
/// pulling the roll from the host with OpenSSH's scp and sftp and with rsync, through the board's forwarded
/// ports. In the serialized board suite: the service here holds the one camera.
extension BoardDeviceTests {
  /// Lines of a pull's stderr that are not about a hidden temporary: a whole-roll pull lists the hidden files
  /// the service is writing, and may only fail on those (owner-only, so unreadable to `camera`, or gone by the
  /// time it asks for them).
  func unexplained(_ stderr: String) -> [String] {
    let summaries = [
      "rsync error: some files/attrs were not transferred", "rsync error: some files vanished",
      "file has vanished", "some files vanished before they could be transferred", "sftp> get -R",
    ]
    return stderr.split(separator: "\n").map(String.init).filter { line in
      !Puller.temporaries.contains { line.contains("/\($0)") } && !summaries.contains { line.contains($0) }
    }
  }

  /// Every file under `folder`, relative to it.
  func files(under folder: String) -> [String] {
    (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []).filter {
      var isDirectory: ObjCBool = false
      return FileManager.default.fileExists(atPath: "\(folder)/\($0)", isDirectory: &isDirectory) && !isDirectory.boolValue
    }.sorted()
  }

  /// What is wrong with a pulled file, checked by peers that did not write it; nil when it is whole.
  func problem(with path: String) throws -> String? {
    let name = (path as NSString).lastPathComponent
    if name.hasPrefix(".") {
      return Puller.stateFiles.contains(name) && !path.contains("/DCIM/") ? nil : "a hidden file was pulled"
    }
    if name.hasSuffix(".JPG") {
      let jpeginfo = try Board.host(["/usr/bin/jpeginfo", "-c", path])
      let verdict = jpeginfo.stdout.split(whereSeparator: \.isWhitespace).last
      return jpeginfo.status == 0 && verdict?.hasPrefix("OK") == true ? nil : "jpeginfo: \(jpeginfo.stdout)"
    }
    if name.hasSuffix(".MOV") {
      let movie = try probeMovie(path)
      return movie.codec == "mjpeg" && movie.frames > 1 && movie.ffmpeg.isEmpty
        ? nil : "ffprobe/ffmpeg: \(movie.codec) \(movie.frames) frames: \(movie.ffmpeg)"
    }
    return "not an item of the roll"
  }

  @Test func theRollIsPulledWithScpSftpAndRsyncWhileStillsAndAMovieAreTakenAndNothingElseIsAllowed() throws {
    let puller = try Puller.setUp()
    defer { _ = try? Board.kill("sshd") }
    try puller.openConnections()
    defer { puller.closeConnections() }
    let work = "\(Board.stateDirectory!)/pulled"
    try? FileManager.default.removeItem(atPath: work)

    // The service as the shipped unit has systemd run it: its own user and the groups sysusers.d gives it,
    // umask 0027, no new privileges, no capabilities at all (the sandbox is tried in the supervision suite).
    let template = try String(contentsOfFile: "\(Board.repository)/board/virtual/kioskcam.conf", encoding: .utf8)
    let config = template.replacingOccurrences(of: "@ROLL@", with: Puller.roll)
      .replacingOccurrences(of: "optional = display, mode-button", with: "optional = display, mode-button, movie-camera")
      // 10 fps wanted, as in the movie tests: this test is about pulls, and a loaded emulated guest once
      // measured vivid at 21 fps against 25 wanted, which switches movies off.
      + "[movie]\nsize = 640x360\nframe-rate = 10\nmaximum-duration-s = 600\n"
    try config.write(toFile: "\(Board.share!)/appliance.conf", atomically: true, encoding: .utf8)
    let installed = try Board.run(
      "install -m 0644 \(Board.share!)/appliance.conf /etc/kioskcam/kioskcam.conf && find \(Puller.roll) -mindepth 1 -delete")
    try #require(installed.status == 0, "\(installed.stderr)")
    let service = try Service.start()
    defer { _ = try? Service.systemctl("stop kioskcam.service") }
    #expect(try service.journal().contains("kioskcam: ready"))
    let status = try Board.systemd("grep -E '^(Uid|Gid|Groups|NoNewPrivs|CapEff|CapBnd):' /proc/\(service.mainPID)/status").stdout
    let ids = try Board.run("echo $(id -u kioskcam) $(id -g kioskcam) $(getent group video gpio audio | cut -d: -f3)").stdout
      .split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    try #require(ids.count == 5, "\(ids)")
    #expect(status.contains("Uid:\t\(ids[0])\t\(ids[0])\t\(ids[0])\t\(ids[0])"), "\(status)")
    #expect(status.contains("Gid:\t\(ids[1])\t\(ids[1])\t\(ids[1])\t\(ids[1])"), "\(status)")
    let groups = status.split(separator: "\n").first { $0.hasPrefix("Groups:") }.map {
      Set($0.dropFirst("Groups:".count).split(whereSeparator: \.isWhitespace).map(String.init))
    }
    #expect(groups == [ids[1], ids[2], ids[3], ids[4]], "its own group, video, gpio and audio only: \(status)")
    #expect(status.contains("NoNewPrivs:\t1") && status.contains("CapEff:\t0000000000000000"))
    #expect(status.contains("CapBnd:\t0000000000000000"), "\(status)")

    // Stills every second through the control socket while the three tools pull the whole roll.
    try Board.spawn("shooter", ["sh", "-c", "while :; do /usr/bin/kioskcam shutter; sleep 1; done"])
    func accepted() throws -> Int { try Board.logs("shooter").split(separator: "\n").filter { $0 == "ok" }.count }
    func saved() throws -> Int { try service.journal().components(separatedBy: "kioskcam: still DCIM/").count - 1 }
    // The pulls over one connection a port take seconds, the installed CLI a press every 5-6 s: the first
    // still is there to be pulled, and the shooter goes on through the pulls to at least three.
    try Board.waitFor("the shooter's first still", seconds: 120) { try saved() >= 1 }
    var pulls: [(round: String, tool: String, result: Board.Output, folder: String)] = []
    pulls += try puller.pullEverything(into: "\(work)/stills").map { ("stills", $0.tool, $0.result, $0.folder) }
    try Board.waitFor("three presses answered", seconds: 120) { try accepted() >= 3 }
    _ = try Board.kill("shooter")
    let gpiochip = try Board.run("stat -c %G:%a /dev/gpiochip0").stdout
    #expect(gpiochip == "gpio:660\n", "the shipped udev rule gave the chip to gpio: \(gpiochip)")
    // Every press the socket answered "ok" is one still, saved while the pulls went on (the last may still be
    // on its way when the shooter stops). The shooter may be stopped with a press sent and its "ok" not yet
    // printed (seen once: 5 stills for 4 answers): one still more than the answers, never two.
    let answered = try accepted()
    try? Board.waitFor("every accepted press saved", seconds: 60) { try saved() >= answered }
    let stills = try saved()
    // At least three answered: the wait for them above fails the test otherwise.
    #expect((answered...answered + 1).contains(stills), "stills \(stills) for \(answered) presses answered ok")

    // A movie recording (its hidden .rec- file grows all along) while they pull again; then the service is
    // stopped by systemd (SIGTERM), which must finish the movie first.
    for request in ["mode movie", "shutter"] {
      let answer = try Board.control(request)
      #expect(answer.status == 0, "\(request): \(answer.stderr)")
    }
    try Board.waitFor("the recording") { try service.journal().contains("kioskcam: movie recording") }
    pulls += try puller.pullEverything(into: "\(work)/movie").map { ("movie", $0.tool, $0.result, $0.folder) }
    let stopped = try Service.systemctl("stop kioskcam.service")
    #expect(stopped.status == 0, "\(stopped.stderr)")
    let end = try Board.unitProperties("kioskcam.service", ["ActiveState", "Result"])
    #expect(end == ["ActiveState": "inactive", "Result": "success"], "a clean stop: \(end)")
    let serviceLog = try service.journal()
    // systemd counts a death by SIGTERM as success too: the service's own last words say it stopped itself.
    #expect(serviceLog.contains("kioskcam: signal 15: stopping") && serviceLog.contains("kioskcam: peak resident memory"))
    #expect(serviceLog.contains("kioskcam.service: Deactivated successfully."), "\(serviceLog)")
    #expect(serviceLog.contains("kioskcam: movie DCIM/"), "the stop finished the movie: \(serviceLog)")
    pulls += try puller.pullEverything(into: "\(work)/after").map { ("after", $0.tool, $0.result, $0.folder) }

    // What the roll holds now, by the guest's own reckoning: every pulled item must be one of these, byte for byte.
    let sums = try Board.run("cd \(Puller.roll) && find DCIM -type f ! -name '.*' -exec sha256sum {} +").stdout
    var published: [String: String] = [:]
    for line in sums.split(separator: "\n") {
      let parts = line.split(separator: " ", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
      if parts.count == 2 { published[parts[1]] = parts[0] }
    }
    #expect(published.keys.contains { $0.hasSuffix(".MOV") }, "\(published.keys.sorted())")
    #expect(published.count == stills + 1, "\(published.keys.sorted())")

    var sawRecordingRefused = false
    for pull in pulls {
      let label = "\(pull.tool) \(pull.round)"
      sawRecordingRefused = sawRecordingRefused || pull.result.stderr.contains("/.rec-")
      if pull.round == "after" {
        #expect(pull.result.status == 0, "\(label): nothing hidden is being written any more: \(pull.result.stderr)")
      } else {
        #expect(unexplained(pull.result.stderr).isEmpty, "\(label): status \(pull.result.status): \(pull.result.stderr)")
      }
      let pulled = files(under: pull.folder)
      #expect(pulled.contains { $0.hasSuffix(".JPG") }, "\(label) pulled stills: \(pulled)")
      for file in pulled {
        let path = "\(pull.folder)/\(file)"
        if let problem = try problem(with: path) { Issue.record("\(label): \(file): \(problem)") }
        guard !(file as NSString).lastPathComponent.hasPrefix(".") else { continue }
        let sum = try Board.host(["/usr/bin/sha256sum", path]).stdout.split(separator: " ").first.map(String.init)
        #expect(sum != nil && sum == published[file], "\(label): \(file) is the published file, byte for byte")
      }
      if pull.round == "after" {
        #expect(Set(pulled.filter { !$0.hasPrefix(".") }) == Set(published.keys), "\(label): the whole roll")
      }
    }
    print(
      "appliance pulls: " + pulls.map { "\($0.tool) \($0.round) status \($0.result.status), \(files(under: $0.folder).count) files" }
        .joined(separator: "; "))
    // The recording's hidden file was there to be pulled, and every tool was turned away from it.
    #expect(sawRecordingRefused, "a pull during the recording listed its .rec- file")

    try checkRefusals(puller)
  }

  /// kioskcam.service started by the board's systemd, with its journal from this start on.
  struct Service {
    let cursor: String
    /// In systemd's PID namespace, as /proc is in `Board.systemd` commands.
    let mainPID: String

    static func systemctl(_ arguments: String) throws -> Board.Output {
      try Board.systemd("systemctl --no-pager \(arguments)", timeout: 300)
    }

    /// The unit as installed (guest-appliance.sh) with the drop-ins in guest-systemd.sh's unit folder, started
    /// from stopped; returns once systemd has it active (READY=1 came).
    static func start() throws -> Service {
      try Board.startSystemd()
      _ = try systemctl("stop kioskcam.service")
      _ = try systemctl("reset-failed kioskcam.service")
      let shown = try Board.systemd("journalctl -n 1 --show-cursor --no-pager -o cat")
      let cursor = try #require(shown.stdout.components(separatedBy: "-- cursor: ").last?
        .trimmingCharacters(in: .whitespacesAndNewlines), "\(shown.stdout) \(shown.stderr)")
      let started = try systemctl("start kioskcam.service")
      guard started.status == 0 else {
        // Restart=on-failure would go on trying, holding the camera and the control socket from later tests.
        _ = try? systemctl("stop kioskcam.service")
        throw BoardFailure("systemctl start: \(started.stderr)")
      }
      let pid = try #require(try Board.unitProperties("kioskcam.service", ["MainPID"])["MainPID"])
      return Service(cursor: cursor, mainPID: pid)
    }

    /// The unit's journal since this start: the service's output and systemd's words about it.
    func journal() throws -> String {
      try Board.systemd("journalctl -u kioskcam.service --no-pager -o cat --after-cursor='\(cursor)'").stdout
    }
  }

  /// The camera account can pull and do nothing else: each attempt refused, with the tool's own words.
  func checkRefusals(_ puller: Puller) throws {
    let item = "/roll/DCIM/100KIOSK/IMG_0001.JPG"
    let local = "\(puller.keys)/upload.txt"
    try "not for the roll\n".write(toFile: local, atomically: true, encoding: .utf8)
    let sftpRefusals: [(command: String, words: String)] = [
      ("put \(local) /roll/DCIM/100KIOSK/upload.txt", "dest open \"/roll/DCIM/100KIOSK/upload.txt\": Permission denied"),
      ("put \(local) /upload.txt", "dest open \"/upload.txt\": Permission denied"),
      ("rm \(item)", "remote delete \(item): Permission denied"),
      ("rename \(item) /roll/DCIM/100KIOSK/IMG_9999.JPG", "remote rename \"\(item)\" to \"/roll/DCIM/100KIOSK/IMG_9999.JPG\": Permission denied"),
      ("mkdir /roll/DCIM/101KIOSK", "remote mkdir \"/roll/DCIM/101KIOSK\": Permission denied"),
      ("chmod 666 \(item)", "remote setstat \"\(item)\": Permission denied"),
      ("ln -s /etc/passwd /roll/passwd", "remote symlink file \"/etc/passwd\" to \"/roll/passwd\": Permission denied"),
      ("get /etc/passwd \(puller.keys)/passwd", "File \"/etc/passwd\" not found."),
      ("get ../../etc/passwd \(puller.keys)/passwd", "not found."),
      ("get /etc/kioskcam/ssh/authorized_keys \(puller.keys)/passwd", "not found."),
    ]
    // One session tries them all, in order ("-": a batch goes on past a failed command), each refused in the
    // server's words after the one before (every connection costs seconds on the emulated board).
    let refused = try puller.sftp(sftpRefusals.map { "-" + $0.command + "\n" }.joined())
    var rest = refused.stderr[...]
    for refusal in sftpRefusals {
      guard let found = rest.range(of: refusal.words) else {
        Issue.record("sftp \(refusal.command): not refused with \(refusal.words): \(refused.stderr)")
        continue
      }
      rest = rest[found.upperBound...]
    }
    #expect(!FileManager.default.fileExists(atPath: "\(puller.keys)/passwd"), "nothing from outside the roll arrived")
    // The chroot: the account's whole world is the roll.
    let listing = try puller.sftp("ls -a /\n")
    #expect(listing.status == 0 && listing.stdout.contains("/roll"), "\(listing.stdout) \(listing.stderr)")
    #expect(!listing.stdout.contains("/etc") && !listing.stdout.contains("/usr"), "\(listing.stdout)")

    let scpUp = try puller.scp([local, "camera@127.0.0.1:/roll/"])
    #expect(scpUp.status == 1 && scpUp.stderr.contains("dest open \"/roll/upload.txt\": Permission denied"), "\(scpUp.stderr)")
    // Legacy scp asks to run a command: it meets the forced SFTP server instead.
    let legacy = try puller.scp(["-O", "camera@127.0.0.1:\(item)", "\(puller.keys)/legacy.jpg"])
    #expect(legacy.status != 0 && !FileManager.default.fileExists(atPath: "\(puller.keys)/legacy.jpg"), "\(legacy.stderr)")

    let rsyncRefusals: [(arguments: [String], words: String)] = [
      ([local, "camera@127.0.0.1:"], "rrsync error: sending to read-only server is not allowed"),
      (["-a", "--remove-source-files", "camera@127.0.0.1:DCIM/", "\(puller.keys)/rsync-remove/"],
       "rrsync error: option --remove-source-files has been disabled on this server"),
      (["-a", "--delete", local, "camera@127.0.0.1:DCIM/"], "rrsync error: sending to read-only server is not allowed"),
      (["camera@127.0.0.1:../../../etc/passwd", "\(puller.keys)/passwd"], "rrsync error: do not use .. in arg"),
      (["camera@127.0.0.1:/etc/passwd", "\(puller.keys)/passwd"], "No such file or directory"),
    ]
    for refusal in rsyncRefusals {
      let result = try puller.rsync(refusal.arguments)
      #expect(result.status == 12, "rsync \(refusal.arguments): \(result.status) \(result.stderr)")
      #expect(result.stderr.contains(refusal.words), "rsync \(refusal.arguments): \(result.stderr)")
    }
    #expect(!FileManager.default.fileExists(atPath: "\(puller.keys)/passwd"), "nothing from outside the roll arrived")
    let intact = try Board.run("test -f \(Puller.roll)/DCIM/100KIOSK/IMG_0001.JPG && ! ls -a \(Puller.roll) \(Puller.roll)/DCIM/100KIOSK | grep -q upload")
    #expect(intact.status == 0, "the roll is as the service left it")

    // No shell on either port, no terminal, no forwarding either way.
    let shell22 = try puller.ssh(port: puller.sftpPort, [], command: "id")
    #expect(shell22.status == 1 && shell22.stdout.contains("This service allows sftp connections only."), "\(shell22.stdout)")
    #expect(!shell22.stdout.contains("uid="))
    let shell2222 = try puller.ssh(port: puller.rsyncPort, [], command: "id")
    #expect(shell2222.status == 1 && shell2222.stderr.contains("rrsync error: SSH_ORIGINAL_COMMAND does not run rsync"), "\(shell2222.stderr)")
    #expect(!shell2222.stdout.contains("uid="))
    let escape = try puller.ssh(port: puller.rsyncPort, [], command: "rsync --server --sender . /; id")
    #expect(escape.status != 0 && !escape.stdout.contains("uid="), "\(escape.stdout) \(escape.stderr)")
    for port in [puller.sftpPort, puller.rsyncPort] {
      let tty = try puller.ssh(port: port, ["-tt"])
      #expect(tty.stderr.contains("PTY allocation request failed"), "\(tty.status) \(tty.stderr)")
      let local = try puller.ssh(port: port, ["-W", "127.0.0.1:22"])
      #expect(local.status == 255 && local.stderr.contains("administratively prohibited"), "\(local.stderr)")
      let remote = try puller.ssh(port: port, ["-N", "-o", "ExitOnForwardFailure=yes", "-R", "0:127.0.0.1:22"])
      #expect(remote.status == 255 && remote.stderr.contains("remote port forwarding failed"), "\(remote.stderr)")
    }
    // Only the key opens the account.
    let stranger = try puller.host(
      ["/usr/bin/ssh"] + puller.sshOptions.map { $0 == "\(puller.keys)/client" ? "\(puller.keys)/stranger" : $0 }
        + ["-p", puller.sftpPort, "camera@127.0.0.1", "true"])
    #expect(stranger.status == 255 && stranger.stderr.contains("Permission denied (publickey)"), "\(stranger.stderr)")
  }
}
