import Foundation
import Synchronization
import Testing

/// The people who pull the roll in the appliance test: this run's keys, the appliance's files in the guest
/// (guest-appliance.sh), and OpenSSH's scp and sftp and rsync through the board's forwarded ports, one master
/// connection a port.
extension BoardDeviceTests {
  /// Keys made for this run only, in the shared folder (the guest copies them to where the appliance keeps
  /// them): the guest sshd's host key, and the puller's key in authorized_keys.
  struct Puller {
    let keys: String
    let sftpPort: String
    let rsyncPort: String

    static let roll = "/var/lib/kioskcam/roll"
    /// Hidden names the roll writes before a file is complete (Sources/CameraRoll): never to be pulled.
    static let temporaries = [".tmp-", ".rec-", ".kioskcam-last-number.new"]
    /// Hidden names that are the roll's own finished state, beside DCIM.
    static let stateFiles: Set = [".kioskcam-items.jsonl", ".kioskcam-last-number", ".kioskcam-record-reserve"]

    /// The appliance's files in the guest (guest-appliance.sh), with this run's keys, put there once a boot (a
    /// minute under emulation; the guest's /etc and /usr are in memory, so a power cut's reboot needs them
    /// again); each later call puts the board's shipped configuration back, as the script leaves it, over
    /// whatever a test installed. Returns the keys' folder.
    static func installAppliance() throws -> String {
      let boot = try Board.run("cat /proc/sys/kernel/random/boot_id").stdout
      if let done = installed.withLock({ $0 }), done.boot == boot {
        let conf = try Board.run(
          "sed -e 's|@ROLL@|\(roll)|' \(Board.repository)/board/virtual/kioskcam.conf > /etc/kioskcam/kioskcam.conf")
        try #require(conf.status == 0, "the board's configuration: \(conf.stderr)")
        return done.keys
      }
      let keys = try install()
      installed.withLock { $0 = (boot, keys) }
      return keys
    }

    private static let installed = Mutex<(boot: String, keys: String)?>(nil)

    /// The appliance's files put back whole, for the tests after one that took them away (the package's purge).
    static func reinstallAppliance() throws {
      installed.withLock { $0 = nil }
      _ = try installAppliance()
    }

    private static func install() throws -> String {
      let keys = "\(Board.share!)/ssh-keys"
      try? FileManager.default.removeItem(atPath: keys)
      try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
      for (file, comment) in [("ssh_host_ed25519_key", "board-host"), ("client", "puller"), ("stranger", "not allowed")] {
        let made = try Board.host(["/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", "\(keys)/\(file)"])
        try #require(made.status == 0, "ssh-keygen: \(made.stderr)")
      }
      try FileManager.default.copyItem(atPath: "\(keys)/client.pub", toPath: "\(keys)/authorized_keys")
      let setup = try Board.run("sh board/virtual/guest-appliance.sh \(Board.binary) \(keys)", timeout: 300)
      try #require(setup.status == 0, "guest-appliance.sh: \(setup.stdout) \(setup.stderr)")
      return keys
    }

    static func setUp() throws -> Puller {
      let keys = try installAppliance()
      _ = try? Board.kill("sshd")
      try Board.spawn("sshd", ["/usr/sbin/sshd", "-D", "-e"])
      try Board.waitFor("sshd to listen on 22 and 2222") {
        let log = try Board.logs("sshd")
        return log.contains("Server listening on 0.0.0.0 port 22.") && log.contains("Server listening on 0.0.0.0 port 2222.")
      }
      let ports = try ["22", "2222"].map { port in
        let answer = try Board.host([Board.cli, "port", port])
        try #require(answer.status == 0, "board port \(port): \(answer.stderr)")
        return answer.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
      }
      // The host key is known in advance: StrictHostKeyChecking proves we talk to the guest's sshd.
      let hostKey = try String(contentsOfFile: "\(keys)/ssh_host_ed25519_key.pub", encoding: .utf8)
        .split(separator: " ").prefix(2).joined(separator: " ")
      try ports.map { "[127.0.0.1]:\($0) \(hostKey)\n" }.joined().write(
        toFile: "\(keys)/known_hosts", atomically: true, encoding: .utf8)
      return Puller(keys: keys, sftpPort: ports[0], rsyncPort: ports[1])
    }

    var sshOptions: [String] {
      [
        "-i", "\(keys)/client", "-o", "IdentitiesOnly=yes", "-o", "UserKnownHostsFile=\(keys)/known_hosts",
        "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-F", "/dev/null",
      ]
    }

    /// The pulls and the sftp, scp and rsync refusals ride one connection a port, as a person's
    /// `ControlMaster` would: every new connection is a key exchange in the emulated guest (about 10 s). The
    /// login checks (a shell, a terminal, forwarding, a stranger's key) keep connections of their own.
    var pullOptions: [String] { sshOptions + ["-o", "ControlMaster=no", "-o", "ControlPath=\(keys)/mux-%p"] }

    /// One master connection a port, in the background until `closeConnections`.
    func openConnections() throws {
      for port in [sftpPort, rsyncPort] {
        let master = try host(
          ["/bin/sh", "-c", "exec \"$@\" >/dev/null 2>>\(keys)/mux-\(port).log", "sh", "/usr/bin/ssh"] + sshOptions
            + ["-o", "ControlMaster=yes", "-o", "ControlPersist=yes", "-o", "ControlPath=\(keys)/mux-%p", "-N", "-f", "-p", port,
              "camera@127.0.0.1"])
        let log = (try? String(contentsOfFile: "\(keys)/mux-\(port).log", encoding: .utf8)) ?? ""
        try #require(master.status == 0, "ssh master on \(port): \(log)")
      }
    }

    func closeConnections() {
      for port in [sftpPort, rsyncPort] {
        _ = try? host(["/usr/bin/ssh"] + sshOptions + ["-o", "ControlPath=\(keys)/mux-%p", "-O", "exit", "-p", port, "camera@127.0.0.1"])
      }
    }

    /// A host program with a liveness deadline (a hung transfer fails the test rather than stalling it).
    func host(_ arguments: [String], stdin: String? = nil) throws -> Board.Output {
      if let stdin {
        let batch = "\(keys)/batch-\(UUID().uuidString)"
        try stdin.write(toFile: batch, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: batch) }
        return try Board.host(["/bin/sh", "-c", "exec \"$@\" < \(batch)", "sh", "/usr/bin/timeout", "300"] + arguments)
      }
      return try Board.host(["/usr/bin/timeout", "300"] + arguments)
    }

    func ssh(port: String, _ options: [String], command: String? = nil) throws -> Board.Output {
      try host(["/usr/bin/ssh"] + sshOptions + ["-p", port] + options + ["camera@127.0.0.1"] + (command.map { [$0] } ?? []), stdin: "")
    }

    func sftp(_ commands: String) throws -> Board.Output {
      try host(["/usr/bin/sftp"] + pullOptions + ["-P", sftpPort, "-b", "-", "camera@127.0.0.1"], stdin: commands)
    }

    func scp(_ arguments: [String]) throws -> Board.Output {
      try host(["/usr/bin/scp"] + pullOptions + ["-P", sftpPort] + arguments)
    }

    func rsync(_ arguments: [String]) throws -> Board.Output {
      let shell = (["ssh"] + pullOptions + ["-p", rsyncPort]).joined(separator: " ")
      return try host(["/usr/bin/rsync", "-e", shell] + arguments)
    }

    /// The whole roll, the way a person would pull it with each tool, into `destination`/TOOL.
    func pullEverything(into destination: String) throws -> [(tool: String, result: Board.Output, folder: String)] {
      try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
      return [
        ("scp", try scp(["-r", "camera@127.0.0.1:/roll", "\(destination)/scp"]), "\(destination)/scp"),
        ("sftp", try sftp("get -R /roll \(destination)/sftp\n"), "\(destination)/sftp"),
        ("rsync", try rsync(["-a", "camera@127.0.0.1:", "\(destination)/rsync/"]), "\(destination)/rsync"),
      ]
    }
  }
}
