import Foundation
import Testing

/// The display on the board going away under the running service, by its driver unbound or its connector
/// unplugged, and coming back.
extension BoardDeviceTests {
  /// The display's driver unbound under the running service (as a display unplugged): the service lets it go
  /// and goes on taking pictures; bound again, the display is taken back and the preview returns.
  @Test func aDisplayThatGoesAwayIsLetGoAndTakenBack() throws {
    let pci = "$(basename $(readlink -f /sys/class/drm/card0/device))"
    let device = try Board.run("echo \(pci)").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    try #require(!device.isEmpty)
    defer { _ = try? Board.run("[ -e /dev/dri/card0 ] || echo \(device) > /sys/bus/pci/drivers/bochs-drm/bind") }
    let (config, roll) = try Board.makeConfig(name: "unplugdisplay")
    try Board.withService("unplugdisplay", config: config) {
      try Board.waitFor("colour bars") { VividBars.mismatches(in: try Board.screendump().pixel, x: 0, width: 1280, y: 400).isEmpty }

      let unbound = try Board.run("echo \(device) > /sys/bus/pci/drivers/bochs-drm/unbind")
      try #require(unbound.status == 0, "\(unbound.stderr)")
      // The service's own report says it let the card go; its log says why, once.
      try Board.waitFor("the display let go") {
        try displayState() == (nil, false) && Board.logs("unplugdisplay").contains("kioskcam: display lost: ")
      }
      let lost = try Board.logs("unplugdisplay")
      #expect(lost.components(separatedBy: "drmModePageFlip").count <= 3, "one failure, not one per frame: \(lost)")
      try Board.click("shutter")
      try Board.waitOnShare("a still without a display") { try Board.logs("unplugdisplay").contains("still DCIM/100KIOSK/IMG_0001.JPG") }
      #expect(try jpegs(in: roll) == ["DCIM/100KIOSK/IMG_0001.JPG"])

      let bound = try Board.run("echo \(device) > /sys/bus/pci/drivers/bochs-drm/bind")
      try #require(bound.status == 0, "\(bound.stderr)")
      try Board.waitFor("the display back") { try displayState() == ("/dev/dri/card0", true) }
      try Board.waitFor("colour bars again") {
        VividBars.mismatches(in: try Board.screendump().pixel, x: 0, width: 1280, y: 400).isEmpty
      }
      let stopped = try Board.kill("unplugdisplay")
      #expect(stopped.stdout.contains("exited 0"), "\(stopped.stdout)")
    }
  }

  /// The connector unplugged on a card that stays (its status forced off through sysfs, which is what a pulled
  /// cable looks like to the kernel; bochs sends no hot-plug uevent for it, so the status is what is read):
  /// the service gives the screen back, goes on taking pictures, and takes the display again once it is
  /// connected.
  @Test func anUnpluggedConnectorIsLetGoAndTakenBack() throws {
    let status = "/sys/class/drm/card0-Virtual-1/status"
    defer { _ = try? Board.run("echo detect > \(status)") }
    let (config, roll) = try Board.makeConfig(name: "unplugconnector")
    try Board.withService("unplugconnector", config: config) {
      try Board.waitFor("colour bars") { VividBars.mismatches(in: try Board.screendump().pixel, x: 0, width: 1280, y: 400).isEmpty }

      let unplugged = try Board.run("echo off > \(status) && cat \(status)")
      try #require(unplugged.stdout.contains("disconnected"), "\(unplugged.stdout) \(unplugged.stderr)")
      try Board.waitFor("the display let go") {
        try displayState() == (nil, false) && Board.logs("unplugconnector").contains("kioskcam: display lost: ")
      }
      let verdict = Board.capability("display", in: try Board.status())
      #expect((verdict?["evidence"] as? String)?.hasSuffix("/dev/dri/card0: Virtual-1 disconnected") == true, "\(verdict ?? [:])")
      // The screen was given back as it was found (the console), so the kiosk no longer draws the camera on it.
      try Board.waitFor("the preview gone from the screen") {
        !VividBars.mismatches(in: try Board.screendump().pixel, x: 0, width: 1280, y: 400).isEmpty
      }
      let shown = try Board.status()["previewFramesShown"] as? Int
      _ = try Board.control("shutter")
      try Board.waitOnShare("a still without a display") { try Board.logs("unplugconnector").contains("still DCIM/100KIOSK/IMG_0001.JPG") }
      #expect(try jpegs(in: roll) == ["DCIM/100KIOSK/IMG_0001.JPG"])
      let headless = try Board.status()
      #expect(headless["previewFramesShown"] as? Int == shown, "nothing is drawn while unplugged")
      #expect(headless["display"] == nil, "\(headless)")

      let replugged = try Board.run("echo detect > \(status) && cat \(status)")
      try #require(replugged.stdout.contains("connected"), "\(replugged.stdout) \(replugged.stderr)")
      try Board.waitFor("the display back") { try displayState() == ("/dev/dri/card0", true) }
      try Board.waitFor("colour bars again") {
        VividBars.mismatches(in: try Board.screendump().pixel, x: 0, width: 1280, y: 400).isEmpty
      }
      let stopped = try Board.kill("unplugconnector")
      #expect(stopped.stdout.contains("exited 0"), "\(stopped.stdout)")
    }
  }

  /// The display as the service reports it (`status --json`): the card it holds, and the gate's verdict.
  func displayState() throws -> (card: String?, available: Bool?) {
    let status = try Board.status()
    return (status["display"] as? String, Board.capability("display", in: status)?["available"] as? Bool)
  }
}
