import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The virtual board seen from the host, through `board/virtual/board`: the same commands a person uses.
struct Board {
  static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path
  static let cli = "\(repository)/board/virtual/board"

  /// The board's state folder, set by `make test`; device tests run only when it is set and the board is up.
  static let stateDirectory = ProcessInfo.processInfo.environment["KIOSKCAM_BOARD_DIR"]
  static let share = stateDirectory.map { "\($0)/share" }
  /// The optimised service binary under test, as the build left it on the host.
  static let hostBinary =
    ProcessInfo.processInfo.environment["KIOSKCAM_BINARY"] ?? "\(repository)/.build/release/kioskcam"
  /// The binary the guest runs: `hostBinary` copied into the guest's memory (`guestCopy`), or `hostBinary`
  /// itself, over the shared file system, before the copy is made or when it could not be.
  static var binary: String { guestCopy.path ?? hostBinary }

  /// The guest sees the host's file system over 9p without a page cache, so every start of the 30 MB binary
  /// read the pages it touched over the channel again: `--version` took 0.5 s from there and 0.2 s from the
  /// guest's tmpfs, and a CLI start on the busy board took seconds. The binary and the libcamera shim the build
  /// leaves beside it (where kioskcam and guest-appliance.sh look for it) are copied into /run, in a folder
  /// named by their SHA-256s and checked against them in the guest, so a copy of another build is never run;
  /// a new build's copy replaces the last one. Made once per test process, when the board is first found up.
  static let guestCopy: (path: String?, failure: String?) = {
    let folder = URL(fileURLWithPath: hostBinary).deletingLastPathComponent().path
    let files = [hostBinary, "\(folder)/libkioskcam-libcamera.so"].filter { FileManager.default.fileExists(atPath: $0) }
    do {
      let hashed = try host(["/usr/bin/sha256sum"] + files, timeout: 120)
      let sums = hashed.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
      guard hashed.status == 0, sums.count == files.count, sums.allSatisfy({ $0.count == 64 }) else {
        return (nil, "sha256sum \(files): \(hashed.stderr)")
      }
      let copy = "/run/kioskcam-test/" + sums.map { $0.prefix(16) }.joined(separator: "-")
      let names = files.map { URL(fileURLWithPath: $0).lastPathComponent }
      let steps = zip(files, names).map { "cp \(shellQuoted($0)) \(copy)/.\($1) && mv \(copy)/.\($1) \(copy)/\($1)" }
      let copied = try run(
        "[ -x \(copy)/\(names[0]) ] || { rm -rf /run/kioskcam-test && mkdir -p \(copy) && \(steps.reversed().joined(separator: " && ")); }"
          + " && cd \(copy) && sha256sum \(names.joined(separator: " "))", timeout: 120)
      let expected = zip(sums, names).map { "\($0)  \($1)" }.joined(separator: "\n") + "\n"
      guard copied.status == 0, copied.stdout == expected else {
        return (nil, "the binary's copy in the guest: \(copied.stdout)\(copied.stderr)")
      }
      return ("\(copy)/\(names[0])", nil)
    } catch {
      return (nil, "the binary's copy in the guest: \(error)")
    }
  }()

  static let isUp: Bool = whyNotUp == nil

  /// A program of this package built beside the test bundle (`swift build --build-tests` builds them all),
  /// or nil when it is not there.
  static func tool(_ name: String) -> String? {
    guard let bundle = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
    let path = URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent(name).path
    return FileManager.default.isExecutableFile(atPath: path) ? path : nil
  }

  /// Why the device tests cannot run here, or nil when they can.
  static let whyNotUp: String? = {
    guard let stateDirectory else { return "KIOSKCAM_BOARD_DIR is not set (make test sets it)" }
    guard FileManager.default.isExecutableFile(atPath: hostBinary) else { return "\(hostBinary) is not an executable file" }
    do {
      let status = try host([cli, "status"], timeout: 60)
      guard status.status == 0 else {
        return "board status in \(stateDirectory) exited \(status.status): \(status.stdout)\(status.stderr)"
      }
    } catch {
      return "board status: \(error)"
    }
    return guestCopy.failure
  }()

  /// `make test` started the board for the device tests: then a board that is not up is a failure, not a skip.
  static let required = ProcessInfo.processInfo.environment["KIOSKCAM_DEVICE_TESTS"] == "required"

  struct Output {
    let status: Int32
    let stdout: String
    let stderr: String
  }

  /// Runs a program on the host and waits for it, at most `timeout` seconds: then it is killed (TERM, and
  /// KILL a second later) and the call throws, so a hung tool fails its test instead of the whole run.
  @discardableResult
  static func host(_ arguments: [String], timeout: TimeInterval = 300) throws -> Output {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try process.run()
    // Read while it runs, on threads of their own: a full pipe would block the child forever.
    let output = Captured()
    let readers = DispatchGroup()
    let keepers: [(Pipe, @Sendable (Data) -> Void)] = [(out, { output.set(stdout: $0) }), (err, { output.set(stderr: $0) })]
    for (pipe, keep) in keepers {
      readers.enter()
      Thread.detachNewThread {
        keep(pipe.fileHandleForReading.readDataToEndOfFile())
        readers.leave()
      }
    }
    guard exited.wait(timeout: .now() + timeout) == .success else {
      process.terminate()
      if exited.wait(timeout: .now() + 1) == .timedOut { Glibc.kill(process.processIdentifier, SIGKILL) }
      _ = readers.wait(timeout: .now() + 5)
      throw BoardFailure("\(arguments.joined(separator: " ").prefix(200)): still running after \(Int(timeout)) s, killed")
    }
    _ = readers.wait(timeout: .now() + 30)
    return Output(status: process.terminationStatus, stdout: output.stdout, stderr: output.stderr)
  }

  /// A child's output, filled in by its two reader threads.
  private final class Captured: @unchecked Sendable {
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()
    func set(stdout data: Data) { lock.withLock { out = data } }
    func set(stderr data: Data) { lock.withLock { err = data } }
    var stdout: String { lock.withLock { String(decoding: out, as: UTF8.self) } }
    var stderr: String { lock.withLock { String(decoding: err, as: UTF8.self) } }
  }

  /// Runs a shell command in the guest as root, as `board run --timeout T -- command` does.
  @discardableResult
  static func run(_ command: String, timeout: Int = 120) throws -> Output {
    BoardSocket.exec(command, timeout: timeout, state: stateDirectory!)
  }

  /// Runs a shell command in the guest beside the board's systemd (board/virtual/guest-systemd.sh), where
  /// systemctl and journalctl reach it.
  @discardableResult
  static func systemd(_ command: String, timeout: Int = 120) throws -> Output {
    let quoted = command.replacingOccurrences(of: "'", with: "'\\''")
    return try run("sh board/virtual/guest-systemd.sh exec sh -c '\(quoted)'", timeout: timeout)
  }

  /// The guest's systemd, started once per boot and left running; later calls reload its units (a test's
  /// drop-in, a newly installed unit).
  static func startSystemd() throws {
    if try systemd("systemctl show --property=Version").status == 0 {
      let reloaded = try systemd("systemctl daemon-reload")
      guard reloaded.status == 0 else { throw BoardFailure("systemctl daemon-reload: \(reloaded.stderr)") }
      return
    }
    try spawn("systemd", ["sh", "board/virtual/guest-systemd.sh"])
    try waitFor("systemd in the guest") {
      ["running\n", "degraded\n"].contains(try systemd("systemctl is-system-running").stdout)
    }
  }

  /// `systemctl show UNIT`: the named properties and their values.
  static func unitProperties(_ unit: String, _ names: [String]) throws -> [String: String] {
    let shown = try systemd("systemctl show \(unit) " + names.map { "-p \($0)" }.joined(separator: " "))
    var properties: [String: String] = [:]
    for line in shown.stdout.split(separator: "\n") {
      let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
      if parts.count == 2 { properties[parts[0]] = parts[1] }
    }
    return properties
  }

  /// Runs `body` with the service started on the board under `name` and ready (its log says so), and stops
  /// it (SIGTERM) when `body` returns or throws: a failing test never leaves a service holding the camera, the
  /// lines and the display for the next one. Every device test starts the service through here. A body may
  /// stop it itself to read its last words; stopping it again is then a no-op.
  static func withService<T>(_ name: String, config: String, _ body: () throws -> T) throws -> T {
    _ = try? kill(name, signal: "KILL")
    try spawn(name, [binary, "run", "--config", config])
    defer { _ = try? kill(name) }
    try waitOnShare("\(name) to be ready") { try logs(name).contains("kioskcam: ready") }
    return try body()
  }

  /// The guest's CLOCK_MONOTONIC now in seconds, to 10 ms (its uptime: the board never suspends): the clock vivid
  /// and the webcam stamp frames with, and the kiosk logs by.
  static func guestClock() throws -> Double {
    let uptime = try run("cut -d ' ' -f 1 /proc/uptime")
    guard uptime.status == 0, let seconds = Double(uptime.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
      throw BoardFailure("uptime: \(uptime.stdout) \(uptime.stderr)")
    }
    return seconds
  }

  /// The shell words that find the process of the service started with `config` (the oldest match: the
  /// service, not a `status` or a check run beside it), for a guest command line: `pid=$(...)`.
  static func servicePID(config: String) -> String { "$(pgrep -o -f '\(binary) run --config \(config)')" }

  private static let throttleGroup = "/sys/fs/cgroup/kioskcam-throttled"

  /// Puts the service started with `config` on `share` of one CPU (a cgroup v2 `cpu.max` quota on all its
  /// threads) until `unthrottle`: a board too slow for a while.
  static func throttle(config: String, share: Double) throws {
    let result = try run(
      "pid=\(servicePID(config: config)) && echo +cpu > /sys/fs/cgroup/cgroup.subtree_control"
        + " && mkdir -p \(throttleGroup) && echo '\(Int(share * 100_000)) 100000' > \(throttleGroup)/cpu.max"
        + " && echo $pid > \(throttleGroup)/cgroup.procs")
    guard result.status == 0 else { throw BoardFailure("throttle: \(result.stdout) \(result.stderr)") }
  }

  /// Gives the service started with `config` the whole board back.
  static func unthrottle(config: String) throws {
    let result = try run("echo \(servicePID(config: config)) > /sys/fs/cgroup/cgroup.procs")
    guard result.status == 0 else { throw BoardFailure("unthrottle: \(result.stdout) \(result.stderr)") }
  }

  /// `throttle` for `seconds` of the guest's clock (and the agent's two round trips), then `unthrottle`.
  static func throttle(config: String, share: Double, seconds: Double) throws {
    try throttle(config: config, share: share)
    let slept = try run("sleep \(seconds)")
    try unthrottle(config: config)
    guard slept.status == 0 else { throw BoardFailure("throttle: sleep: \(slept.stderr)") }
  }

  /// `board spawn NAME -- COMMAND...`: a background process in the guest, its output in `logs(name)`.
  static func spawn(_ name: String, _ command: [String]) throws {
    // As the CLI: one word is a shell command as it stands; several are quoted and joined (Python's shlex.join).
    let line = command.count == 1 ? command[0] : command.map(shellQuoted).joined(separator: " ")
    do {
      _ = try BoardSocket.result(["op": "spawn", "name": name, "cmd": line], timeout: 30, state: stateDirectory!)
    } catch { throw BoardFailure("spawn \(name): \(error)") }
  }

  /// `board kill NAME SIGNAL --wait 30`: its status and the line it prints ("NAME: sent signal 15 to pid P,
  /// exited 0"), or status 1 and the agent's reason (a name never spawned, a process already gone).
  @discardableResult
  static func kill(_ name: String, signal: String = "TERM") throws -> Output {
    let request: [String: Any] = ["op": "kill", "name": name, "signal": signal, "wait": 30.0]
    switch BoardSocket.exchange(request, timeout: 60, state: stateDirectory!) {
    case .frame(let result):
      var line = "\(name): sent signal \(result["signal"] ?? "?") to pid \(result["pid"] ?? "?")"
      if let exited = result["exited"] { line += exited is NSNull ? ", still running" : ", exited \(exited)" }
      return Output(status: 0, stdout: line + "\n", stderr: "")
    case .refused(let reason), .unreachable(let reason): return Output(status: 1, stdout: "", stderr: "board: \(reason)\n")
    case .timedOut: return Output(status: 1, stdout: "", stderr: "board: no answer from the board within 60 s\n")
    }
  }

  /// A word as a POSIX shell reads it back unchanged (Python's shlex.quote).
  static func shellQuoted(_ word: String) -> String {
    let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")
    if !word.isEmpty && word.allSatisfy({ plain.contains($0) }) { return word }
    return "'" + word.replacingOccurrences(of: "'", with: "'\"'\"'") + "'"
  }

  /// The board's configurations' control socket (board/virtual/kioskcam.conf), the shipped one's too.
  static let controlSocket = "/run/kioskcam/control.sock"

  /// One request line on the service's control socket, written and read by the guest agent itself: the same
  /// bytes `kioskcam shutter`, `mode M`, `zoom Z` or `status --json` send, without starting the CLI in the
  /// emulated guest (4-6 s idle, 10-18 s busy). Status as the CLI's: 0 and the reply, or 69 and the reply's
  /// reason ("error: ..."), or 69 when no service listens there. ControlsDeviceTests keeps the CLI's own test.
  @discardableResult
  static func control(_ line: String, socket: String = controlSocket) throws -> Output {
    let answer = try BoardSocket.result(["op": "control", "socket": socket, "line": line, "timeout": 60.0], timeout: 90, state: stateDirectory!)
    guard answer["connected"] as? Bool == true else {
      return Output(status: 69, stdout: "", stderr: "kioskcam is not running (no service at \(socket)): \(answer["reason"] ?? "")\n")
    }
    let reply = answer["reply"] as? String ?? ""
    return reply.hasPrefix("error: ") ? Output(status: 69, stdout: "", stderr: reply) : Output(status: 0, stdout: reply, stderr: "")
  }

  /// `status --json` on the control socket, with how long the service took to answer: timed by the guest
  /// agent from the request sent to the reply's end, without the host's round trip to the board.
  static func timedStatus(socket: String = controlSocket) throws -> (status: [String: Any], seconds: Double) {
    let answer = try BoardSocket.result(
      ["op": "control", "socket": socket, "line": "status --json", "timeout": 60.0], timeout: 90, state: stateDirectory!)
    guard answer["connected"] as? Bool == true, let seconds = answer["seconds"] as? Double,
      let status = try JSONSerialization.jsonObject(with: Data((answer["reply"] as? String ?? "").utf8)) as? [String: Any]
    else { throw BoardFailure("status: \(answer)") }
    return (status, seconds)
  }

  /// The service's `status --json` report, asked on its control socket.
  static func status(socket: String = controlSocket) throws -> [String: Any] { try timedStatus(socket: socket).status }

  /// One capability's entry in a `status --json` report (name, role, available, evidence): the gate's verdict now.
  static func capability(_ name: String, in status: [String: Any]) -> [String: Any]? {
    (status["capabilities"] as? [[String: Any]])?.first { $0["name"] as? String == name }
  }

  /// Presses and releases `line` (a 100 ms hold, as `board click`, or `holdMilliseconds` for a long press); returns the press's time on the guest's
  /// CLOCK_MONOTONIC, as the guest agent read it just before it pulled the line low: the test's own, not the
  /// service's. Nil when the line was already low (no edge).
  ///
  /// A click comes at least `clickGap` after the one before ended, as a hand's would: the board's buttons are
  /// debounced over 100 ms (board/virtual/kioskcam.conf), and a press that came a round trip after the last
  /// release (a test that clicks again as soon as it sees the last click's effect) was taken for its bounce.
  @discardableResult
  static func click(_ line: String, holdMilliseconds: Int = 100) throws -> Double? {
    let wait = lastClick.withLock { $0.map { clickGap - Date().timeIntervalSince($0) } } ?? 0
    if wait > 0 { Thread.sleep(forTimeInterval: wait) }
    defer { lastClick.withLock { $0 = Date() } }
    let result: [String: Any]
    do {
      result = try BoardSocket.result(
        ["op": "gpio", "action": "click", "line": line, "hold_ms": holdMilliseconds], timeout: 31, state: stateDirectory!)
    } catch { throw BoardFailure("click \(line): \(error)") }
    let edges = result["edges"] as? [[String: Any]] ?? []
    let press = edges.first { $0["edge"] as? String == "falling" }
    return (press?["monotonic_ns_at_write"] as? NSNumber).map { $0.doubleValue / 1e9 }
  }

  /// Twice the board's debounce, and its scheduling slack.
  static let clickGap = 0.3
  private static let lastClick = Mutex<Date?>(nil)

  static func screendump() throws -> PPM {
    let path = "\(stateDirectory!)/test-screen.ppm"
    let result = try host([cli, "screendump", path])
    guard result.status == 0 else { throw BoardFailure("screendump: \(result.stderr)") }
    return try PPM(contentsOf: path)
  }

  /// Polls `condition` until it holds or `seconds` pass: the guest runs under software emulation,
  /// so this is a liveness deadline, never a performance bound. A quarter second between polls, for a
  /// condition that asks the guest (a command, the agent, a screendump), which costs the busy guest a little
  /// each time; `waitOnShare` for one that only reads what the guest wrote to the share.
  static func waitFor(
    _ what: String, seconds: Double = 180, every interval: Double = 0.25, _ condition: () throws -> Bool
  ) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      if try condition() { return }
      Thread.sleep(forTimeInterval: interval)
    }
    throw BoardFailure("timed out after \(Int(seconds)) s waiting for \(what)")
  }

  /// A configuration edit that moves `name`'s roll to `path` inside the guest (a file system only the guest
  /// sees, which a test can fill, freeze or unmount) and keeps `reserve` MiB free there.
  static func guestRoll(_ name: String, at path: String, reserve: Int) -> (String) -> String {
    {
      $0.replacingOccurrences(of: "path = \(share!)/\(name)-roll", with: "path = \(path)")
        .replacingOccurrences(of: "reserve-mb = 16", with: "reserve-mb = \(reserve)")
    }
  }

  /// A configuration for the board with a fresh roll folder both sides can see.
  static func makeConfig(name: String, edit: (String) -> String = { $0 }) throws -> (config: String, roll: String) {
    let roll = "\(share!)/\(name)-roll"
    try? FileManager.default.removeItem(atPath: roll)
    try FileManager.default.createDirectory(atPath: roll, withIntermediateDirectories: true)
    let template = try String(contentsOfFile: "\(repository)/board/virtual/kioskcam.conf", encoding: .utf8)
    let config = "\(share!)/\(name).conf"
    try edit(template.replacingOccurrences(of: "@ROLL@", with: roll)).write(
      toFile: config, atomically: true, encoding: .utf8)
    return (config, roll)
  }
}

struct BoardFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// A binary PPM (P6) as QEMU's screendump and djpeg write it.
struct PPM {
  let width: Int
  let height: Int
  let pixels: [UInt8]

  init(contentsOf path: String) throws {
    let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    // Header: "P6", width, height, maxval, separated by whitespace, then one whitespace byte.
    var fields: [String] = []
    var index = 0
    while fields.count < 4 {
      while index < data.count, [0x20, 0x0A, 0x0D, 0x09].contains(data[index]) { index += 1 }
      if index < data.count, data[index] == UInt8(ascii: "#") {
        while index < data.count, data[index] != 0x0A { index += 1 }
        continue
      }
      let start = index
      while index < data.count, ![0x20, 0x0A, 0x0D, 0x09].contains(data[index]) { index += 1 }
      guard index > start else { throw BoardFailure("\(path): truncated PPM header") }
      fields.append(String(decoding: data[start..<index], as: UTF8.self))
    }
    guard fields[0] == "P6", let width = Int(fields[1]), let height = Int(fields[2]), fields[3] == "255" else {
      throw BoardFailure("\(path): not an 8-bit P6 PPM: \(fields)")
    }
    index += 1
    guard data.count - index >= width * height * 3 else { throw BoardFailure("\(path): truncated PPM data") }
    self.width = width
    self.height = height
    pixels = Array(data[index..<(index + width * height * 3)])
  }

  func pixel(_ x: Int, _ y: Int) -> (Int, Int, Int) {
    let at = (y * width + x) * 3
    return (Int(pixels[at]), Int(pixels[at + 1]), Int(pixels[at + 2]))
  }
}

/// vivid's default test pattern: 75% colour bars, eight of them, left to right.
enum VividBars {
  static let rgb: [(Int, Int, Int)] = [
    (191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0),
    (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0),
  ]

  /// Which bars differ from the expected colour by more than `tolerance`, sampled at each bar's centre on
  /// row `y` of a picture whose bars span `x` ..< `x + width`.
  static func mismatches(
    in sample: (Int, Int) -> (Int, Int, Int), x: Int, width: Int, y: Int, tolerance: Int = 24
  ) -> [String] {
    (0..<8).compactMap { bar in
      let got = sample(x + (bar * 2 + 1) * width / 16, y)
      let want = rgb[bar]
      let close = abs(got.0 - want.0) <= tolerance && abs(got.1 - want.1) <= tolerance && abs(got.2 - want.2) <= tolerance
      return close ? nil : "bar \(bar): got \(got), want \(want)"
    }
  }
}
