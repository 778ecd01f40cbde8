import Foundation
import Testing

/// The repository, found from this file: Tests/RootfsTests/ is two folders below it.
let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent()

/// Runs a tool to the end and returns its exit status and everything it printed.
func run(_ tool: String, _ arguments: [String], in directory: URL = repository) throws -> (status: Int32, output: String) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = [tool] + arguments
  process.currentDirectoryURL = directory
  let pipe = Pipe()
  process.standardOutput = pipe
  process.standardError = pipe
  try process.run()
  let data = pipe.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// The checks of the files that go onto the appliance, by the tools that will read them there.
@Suite struct RootfsOverlayTests {
  /// Every shell script in the repository (tracked, or new and not ignored): by name (`*.sh`) or by a shell shebang (init scripts, CI).
  static func shellScripts() throws -> [String] {
    let files = try run("git", ["ls-files", "--cached", "--others", "--exclude-standard"]).output.split(separator: "\n").map(String.init)
    return files.filter { file in
      if file.hasSuffix(".sh") { return true }
      guard let handle = FileHandle(forReadingAtPath: repository.appendingPathComponent(file).path) else { return false }
      defer { try? handle.close() }
      let head = String(decoding: handle.readData(ofLength: 64), as: UTF8.self)
      guard head.hasPrefix("#!"), let line = head.split(separator: "\n").first else { return false }
      return line.hasSuffix("/sh") || line.hasSuffix("bash") || line.hasSuffix(" sh")
    }
  }

  @Test func everyShellScriptIsShellcheckClean() throws {
    let scripts = try Self.shellScripts()
    // Guards the finder itself: these must be among what it found.
    #expect(scripts.contains("rootfs-overlay/etc/init.d/S90kioskcam"))
    #expect(scripts.contains("board/virtual/guest-init.sh"))
    let result = try run("shellcheck", ["--external-sources"] + scripts)
    #expect(result.status == 0, "\(result.output)")
  }

  /// `systemd-analyze verify` in a root made of the overlay, the unit files of this machine's systemd (the
  /// targets the unit names, standing in for the appliance's) and the kioskcam binary just built, because
  /// verify refuses an ExecStart= whose file does not exist. Verify exits 0 on lines it ignores with a
  /// warning, so any output is a failure too.
  @Test func theUnitVerifies() throws {
    let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("kioskcam-root-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let units = root.appendingPathComponent("usr/lib/systemd/system")
    let binaries = root.appendingPathComponent("usr/bin")
    try FileManager.default.createDirectory(at: units, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(at: binaries, withIntermediateDirectories: true)
    // Copied, not linked: under --root an absolute link would point inside the temporary root.
    let copy = try run("cp", ["-a", "/usr/lib/systemd/system/.", units.path])
    #expect(copy.status == 0, "\(copy.output)")
    let overlayUnit = repository.appendingPathComponent("rootfs-overlay/usr/lib/systemd/system/kioskcam.service")
    let unit = units.appendingPathComponent("kioskcam.service")
    try? FileManager.default.removeItem(at: unit)
    try FileManager.default.copyItem(at: overlayUnit, to: unit)
    let binary = try #require(Self.builtBinary(), "no kioskcam binary built (KIOSKCAM_BINARY or .build/*/kioskcam)")
    try FileManager.default.copyItem(atPath: binary, toPath: binaries.appendingPathComponent("kioskcam").path)

    let result = try run("systemd-analyze", ["verify", "--root=\(root.path)", "kioskcam.service"])
    #expect(result.status == 0 && result.output.isEmpty, "\(result.output)")
  }

  @Test func theUnitSaysWhatTheIssueAsks() throws {
    let text = try String(
      contentsOf: repository.appendingPathComponent("rootfs-overlay/usr/lib/systemd/system/kioskcam.service"), encoding: .utf8)
    let lines = Set(text.split(separator: "\n").map(String.init))
    for wanted in [
      "Type=notify", "Restart=on-failure", "User=kioskcam", "DevicePolicy=closed", "DeviceAllow=char-video4linux rw",
      "DeviceAllow=char-drm rw", "DeviceAllow=char-gpiochip rw", "DeviceAllow=char-alsa rw", "ProtectSystem=strict", "ProtectHome=yes",
      "NoNewPrivileges=yes", "PrivateTmp=yes", "RestrictAddressFamilies=AF_UNIX", "RuntimeDirectory=kioskcam",
      "ReadWritePaths=/var/lib/kioskcam/roll",
    ] {
      #expect(lines.contains(wanted), "missing \(wanted)")
    }
  }

  /// The drop-in read by OpenSSH's own sshd: `-t` checks it, `-T -C` prints what a connection of the camera
  /// account gets on each port, the way sshd will decide it. A scratch main config stands in for the
  /// appliance's; only its host key is needed.
  @Test func theSSHDropInConfinesTheCameraAccount() throws {
    let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("kioskcam-sshd-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let key = folder.appendingPathComponent("hostkey").path
    let keygen = try run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key])
    try #require(keygen.status == 0, "\(keygen.output)")
    let dropIn = repository.appendingPathComponent("rootfs-overlay/etc/ssh/sshd_config.d/kioskcam-camera.conf").path
    let config = folder.appendingPathComponent("sshd_config").path
    try "HostKey \(key)\nInclude \(dropIn)\n".write(toFile: config, atomically: true, encoding: .utf8)

    let check = try run("/usr/sbin/sshd", ["-t", "-f", config])
    #expect(check.status == 0, "\(check.output)")

    func effective(user: String, port: Int) throws -> [String: String] {
      let result = try run("/usr/sbin/sshd", ["-T", "-f", config, "-C", "user=\(user),host=pc,addr=192.0.2.1,lport=\(port)"])
      #expect(result.status == 0, "\(result.output)")
      var settings: [String: String] = [:]
      for line in result.output.split(separator: "\n") {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        if parts.count == 2, settings[parts[0]] == nil { settings[parts[0]] = parts[1] }
      }
      return settings
    }
    for port in [22, 2222] {
      let camera = try effective(user: "camera", port: port)
      #expect(camera["authenticationmethods"] == "publickey")
      #expect(camera["passwordauthentication"] == "no")
      #expect(camera["authorizedkeysfile"] == "/etc/kioskcam/ssh/authorized_keys")
      #expect(camera["permittty"] == "no")
      #expect(camera["allowtcpforwarding"] == "no")
      #expect(camera["allowstreamlocalforwarding"] == "no")
      #expect(camera["allowagentforwarding"] == "no")
      #expect(camera["x11forwarding"] == "no")
      #expect(camera["permittunnel"] == "no")
      #expect(camera["permitlisten"] == "none")
      #expect(camera["permitopen"] == "none")
    }
    let sftp = try effective(user: "camera", port: 22)
    #expect(sftp["chrootdirectory"] == "/var/lib/kioskcam")
    #expect(sftp["forcecommand"] == "internal-sftp -R -d /roll")
    let rsync = try effective(user: "camera", port: 2222)
    #expect(rsync["forcecommand"] == "/usr/bin/rrsync -ro /var/lib/kioskcam/roll")
    // Everyone else keeps the appliance's own rules: the drop-in reaches no other account.
    let other = try effective(user: "root", port: 22)
    #expect(other["forcecommand"] == "none")
    #expect(other["chrootdirectory"] == "none")
  }

  static func builtBinary() -> String? {
    let candidates =
      [ProcessInfo.processInfo.environment["KIOSKCAM_BINARY"]].compactMap { $0 }
      + [".build/debug/kioskcam", ".build/release/kioskcam"].map { repository.appendingPathComponent($0).path }
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
  }
}
