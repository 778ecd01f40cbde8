import Foundation
import Testing

/// make deb's amd64 package on the board, whose guest runs Debian 12's userland, as a user's machine would take
/// it: dpkg runs in the board's systemd namespace (Board.systemd), so that the maintainer scripts reach systemd
/// as on a machine booted with it. The guest's /etc, /usr and /var are in memory: nothing reaches the host.
extension BoardDeviceTests {
  /// The newest amd64 kioskcam package make deb left in .build/deb.
  static func amd64Package() throws -> String {
    let folder = "\(Board.repository)/.build/deb"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    let name = try #require(
      names.filter { $0.hasPrefix("kioskcam_") && $0.hasSuffix("_amd64.deb") }.sorted().last,
      "no kioskcam_*_amd64.deb in \(folder): make test builds it (board/deb/build.sh)")
    return "\(folder)/\(name)"
  }

  /// A second gpio-sim chip whose lines are named as a Raspberry Pi's device tree names its header's (GPIO17,
  /// GPIO27, GPIO22, GPIO23, GPIO24; the buttons pulled up as config.txt's `gpio=17,27,22=ip,pu` does), so that
  /// the shipped configuration finds its shutter as on a Pi. Returns the sysfs folder of its lines' pulls.
  static func addPiHeader() throws -> String {
    let made = try Board.run(
      """
      set -e; cfg=/sys/kernel/config/gpio-sim/piheader; mkdir $cfg $cfg/bank0
      echo pi-header > $cfg/bank0/label; echo 5 > $cfg/bank0/num_lines; i=0
      for name in GPIO17 GPIO27 GPIO22 GPIO23 GPIO24; do
        mkdir $cfg/bank0/line$i; echo $name > $cfg/bank0/line$i/name; i=$((i + 1))
      done
      echo 1 > $cfg/live; lines=/sys/devices/platform/$(cat $cfg/dev_name)/$(cat $cfg/bank0/chip_name)
      for i in 0 1 2; do echo pull-up > $lines/sim_gpio$i/pull; done; udevadm settle; echo $lines
      """)
    try #require(made.status == 0, "the Pi header's gpio-sim chip: \(made.stderr)")
    return made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  static func removePiHeader() {
    _ = try? Board.run(
      "cfg=/sys/kernel/config/gpio-sim/piheader; [ -d $cfg ] || exit 0; echo 0 > $cfg/live;"
        + " rmdir $cfg/bank0/line* $cfg/bank0 $cfg")
  }

  /// Install, upgrade, remove and purge, each judged by dpkg's and systemd's own answers and the files: the
  /// service, enabled by the postinst and run with the shipped configuration as installed, takes a still when
  /// the button on a Pi's GPIO17 is pressed; the upgrade (the same package with a higher version, repacked
  /// by dpkg-deb) keeps an edited conffile and the roll and restarts the service; the removal stops it and keeps
  /// the configuration and the roll; the purge removes /etc/kioskcam and keeps the roll and the accounts.
  @Test func theAmd64PackageInstallsUpgradesRemovesAndPurges() throws {
    let package = try Self.amd64Package()
    _ = try Puller.installAppliance()
    // The tests after this one find the appliance as guest-appliance.sh makes it.
    defer { _ = try? Puller.reinstallAppliance() }
    Self.removePiHeader()
    let header = try Self.addPiHeader()
    defer { Self.removePiHeader() }
    try Board.startSystemd()
    func dpkg(_ arguments: String) throws -> Board.Output {
      try Board.systemd("DEBIAN_FRONTEND=noninteractive dpkg \(arguments)", timeout: 300)
    }
    func state() throws -> String {
      try Board.systemd("dpkg-query -W -f \"\\${Status} \\${Version}\" kioskcam").stdout
    }
    func active() throws -> String { try Board.unitProperties("kioskcam.service", ["ActiveState"])["ActiveState"] ?? "" }
    let version = try Board.host(["/usr/bin/dpkg-deb", "-f", package, "Version"]).stdout
      .trimmingCharacters(in: .whitespacesAndNewlines)

    // A machine without kioskcam: what guest-appliance.sh put in place by hand goes first (the roll's tmpfs
    // stays, as a card's partition would). This host's image forbids starting services from maintainer scripts
    // (its /usr/sbin/policy-rc.d answers 101), which a kiosk's system does not; and man-db's trigger would index
    // every manual page of the host, minutes under emulation, for the one manual page the package adds.
    // (A package left by an earlier run in this boot is purged: dpkg keeps a deleted conffile deleted.)
    _ = try Board.systemd(
      "systemctl stop kioskcam.service; systemctl reset-failed kioskcam.service; dpkg --purge kioskcam-libcamera kioskcam",
      timeout: 300)
    let cleared = try Board.run(
      "rm -rf /usr/bin/kioskcam /usr/lib/kioskcam /usr/lib/systemd/system/kioskcam.service /etc/kioskcam"
        + " /etc/ssh/sshd_config.d/kioskcam-camera.conf /usr/sbin/policy-rc.d /var/lib/man-db/auto-update"
        + " && find \(Puller.roll) -mindepth 1 -delete")
    try #require(cleared.status == 0, "\(cleared.stderr)")

    let installed = try dpkg("-i \(package)")
    try #require(installed.status == 0, "dpkg -i: \(installed.stdout) \(installed.stderr)")
    #expect(try state() == "install ok installed \(version)")
    // The postinst enabled the unit as on any Debian system (deb-systemd-helper's link). It did not start it
    // here: the board's systemd loads units from its own folder alone (guest-systemd.sh), so it calls the unit
    // linked-runtime, not enabled, and deb-systemd-invoke starts only enabled units. The test starts it.
    let wants = try Board.run("readlink /etc/systemd/system/multi-user.target.wants/kioskcam.service").stdout
    #expect(wants == "/lib/systemd/system/kioskcam.service\n", "enabled by the postinst: \(wants)")
    let started = try Board.systemd("systemctl start kioskcam.service", timeout: 180)
    #expect(started.status == 0, "\(started.stderr)")
    try Board.waitFor("the service", seconds: 120) { try active() == "active" }
    let first = try Board.unitProperties("kioskcam.service", ["MainPID"])["MainPID"] ?? ""
    let roll = try Board.run("stat -c '%a %U %G' \(Puller.roll)").stdout
    #expect(roll == "2750 kioskcam camera\n", "the roll as tmpfiles.d makes it: \(roll)")
    #expect(try Board.run("getent passwd kioskcam camera").stdout.split(separator: "\n").count == 2)
    // The shipped configuration's shutter: a button from GPIO17 to ground.
    let pull = "\(header)/sim_gpio0/pull"
    #expect(try Board.run("echo pull-down > \(pull); sleep 0.2; echo pull-up > \(pull)").status == 0)
    let still = "\(Puller.roll)/DCIM/100KIOSK/IMG_0001.JPG"
    try Board.waitFor(still) { try Board.run("test -f \(still)").status == 0 }
    let checked = try Board.run("jpeginfo -c \(still)")
    #expect(checked.status == 0 && checked.stdout.contains(" OK"), "\(checked.stdout) \(checked.stderr)")

    // The upgrade: the same files with a higher version, the conffile edited before it.
    let newer = "\(Board.share!)/kioskcam-newer.deb"
    let unpacked = "\(Board.share!)/kioskcam-newer"
    try? FileManager.default.removeItem(atPath: unpacked)
    #expect(try Board.host(["/usr/bin/dpkg-deb", "-R", package, unpacked]).status == 0)
    let control = "\(unpacked)/DEBIAN/control"
    let fields = try String(contentsOfFile: control, encoding: .utf8)
    try fields.replacingOccurrences(of: "Version: \(version)\n", with: "Version: \(version)+1\n")
      .write(toFile: control, atomically: true, encoding: .utf8)
    // Uncompressed: xz here, on a host whose cores run the board, and unxz in the emulated guest cost seconds
    // and prove nothing of the package.
    let built = try Board.host(["/usr/bin/dpkg-deb", "--root-owner-group", "-Znone", "-b", unpacked, newer])
    try #require(built.status == 0, "dpkg-deb -b: \(built.stderr)")
    let edit = "# edited on this kiosk"
    #expect(try Board.run("echo '\(edit)' >> /etc/kioskcam/kioskcam.conf").status == 0)
    let upgraded = try dpkg("-i \(newer)")
    try #require(upgraded.status == 0, "dpkg -i (upgrade): \(upgraded.stdout) \(upgraded.stderr)")
    #expect(try state() == "install ok installed \(version)+1")
    #expect(try Board.run("tail -n 1 /etc/kioskcam/kioskcam.conf").stdout == "\(edit)\n", "the edited conffile kept")
    try Board.waitFor("the service restarted by the upgrade", seconds: 120) {
      let now = try Board.unitProperties("kioskcam.service", ["ActiveState", "MainPID"])
      return now["ActiveState"] == "active" && now["MainPID"] != first
    }
    #expect(try Board.run("test -f \(still)").status == 0, "the roll kept")

    let removed = try dpkg("-r kioskcam")
    try #require(removed.status == 0, "dpkg -r: \(removed.stdout) \(removed.stderr)")
    #expect(try state() == "deinstall ok config-files \(version)+1")
    #expect(try active() == "inactive", "the removal stopped the service")
    #expect(try Board.run("test -e /usr/bin/kioskcam").status == 1)
    #expect(try Board.run("tail -n 1 /etc/kioskcam/kioskcam.conf").stdout == "\(edit)\n", "the configuration kept")
    #expect(try Board.run("test -f \(still)").status == 0, "the roll kept")

    let purged = try dpkg("-P kioskcam")
    try #require(purged.status == 0, "dpkg -P: \(purged.stdout) \(purged.stderr)")
    let gone = try state()
    #expect(gone.isEmpty || gone.hasPrefix("unknown ok not-installed"), "\(gone)")
    #expect(try Board.run("test -e /etc/kioskcam").status == 1, "the purge removed /etc/kioskcam")
    #expect(try Board.run("test -e /etc/ssh/sshd_config.d/kioskcam-camera.conf").status == 1)
    #expect(try Board.run("test -f \(still)").status == 0, "the roll kept")
    #expect(try Board.run("getent passwd kioskcam camera").stdout.split(separator: "\n").count == 2, "the accounts kept")
    print("package \(version): installed, upgraded to +1 with an edited conffile, removed and purged; the roll kept")
  }
}
