import Foundation
import Testing

extension BoardDeviceTests {
  /// zoom-in on gpio-sim at a 1.0 step: 2.0x, the middle half of vivid's eight bars fills the picture, so
  /// bars 2-5 each take a quarter, on the screen and in the still (decoded by djpeg, at the camera's
  /// 640x360); `kioskcam zoom reset` brings all eight back.
  @Test func zoomInEnlargesTheCentreOnScreenAndInTheStill() throws {
    let (config, roll) = try Board.makeConfig(name: "zoom") {
      $0.replacingOccurrences(of: "cancel = cancel\n", with: "cancel = cancel\nzoom-in = zoom-in\nzoom-out = zoom-out\n")
        .replacingOccurrences(of: "jpeg-quality = 90\n", with: "jpeg-quality = 90\nzoom-step = 1.0\n")
    }
    try Board.withService("zoom", config: config) {
      // vivid has no zoom control of its own (v4l2-ctl, a tool of its own, lists none): the zoom is digital.
      let started = try Board.logs("zoom")
      #expect(started.contains("zoom method: digital to 4.0x"), "\(started)")
      try Board.click("zoom-in")
      try Board.waitOnShare("zoom 2.0x in the log") { try Board.logs("zoom").contains("zoom 2.0x") }

      // 640x360 fills 1280x800 as 1280x720 from y 40: quarters of 320 px.
      func centreBars(_ sample: (Int, Int) -> (Int, Int, Int), width: Int, y: Int) -> [String] {
        (0..<4).compactMap { quarter in
          let got = sample(quarter * width / 4 + width / 8, y)
          let want = VividBars.rgb[2 + quarter]
          let close = abs(got.0 - want.0) <= 24 && abs(got.1 - want.1) <= 24 && abs(got.2 - want.2) <= 24
          return close ? nil : "quarter \(quarter): got \(got), want bar \(2 + quarter) \(want)"
        }
      }
      var mismatches = ["no screendump yet"]
      try Board.waitFor("bars 2-5 across the screen", seconds: 120) {
        let screen = try Board.screendump()
        mismatches = centreBars(screen.pixel, width: 1280, y: 400)
        return mismatches.isEmpty
      }
      #expect(mismatches.isEmpty, "\(mismatches)")

      try press("zoom", expecting: "DCIM/100KIOSK/IMG_0001.JPG")
      let path = "\(roll)/DCIM/100KIOSK/IMG_0001.JPG"
      let decodedPath = "\(Board.stateDirectory!)/test-zoom.ppm"
      #expect(try Board.host(["/usr/bin/djpeg", "-pnm", "-outfile", decodedPath, path]).status == 0)
      let decoded = try PPM(contentsOf: decodedPath)
      #expect(decoded.width == 640 && decoded.height == 360, "the still keeps the camera's size")
      #expect(centreBars(decoded.pixel, width: 640, y: 180).isEmpty, "\(centreBars(decoded.pixel, width: 640, y: 180))")
      // exiftool reads the zoom the still was cut with; the roll's record names the crop.
      let ratio = try Board.host(["/usr/bin/exiftool", "-s", "-s", "-s", "-n", "-DigitalZoomRatio", path])
      #expect(ratio.stdout == "2\n", "\(ratio.stdout) \(ratio.stderr)")
      let records = try String(contentsOfFile: "\(roll)/.kioskcam-items.jsonl", encoding: .utf8)
      #expect(records.contains("\"crop\":\"320x180+160+90\""), "\(records)")
      let status = try Board.control("status --json")
      #expect(status.stdout.contains("\"zoom\" : \"2.0x\"") && status.stdout.contains("\"zoomMethod\" : \"digital to 4.0x\""), "\(status.stdout)")

      let reset = try Board.control("zoom reset")
      #expect(reset.status == 0 && reset.stdout.contains("ok"), "\(reset.stdout) \(reset.stderr)")
      try Board.waitFor("all eight bars back", seconds: 120) {
        let screen = try Board.screendump()
        mismatches = VividBars.mismatches(in: screen.pixel, x: 0, width: 1280, y: 400)
        return mismatches.isEmpty
      }
      #expect(mismatches.isEmpty, "\(mismatches)")
      let stopped = try Board.kill("zoom")
      #expect(stopped.stdout.contains("exited 0"), "\(stopped.stdout)")
    }
  }

  /// The verdict on vivid's own zoom control, by v4l2-ctl and by `kioskcam probe --json`: none, so the zoom is
  /// digital only, and the formats it can crop are the ones vivid offers of YUYV, NV12 and MJPEG.
  @Test func probeSaysVividZoomsDigitallyOnly() throws {
    let controls = try Board.run("v4l2-ctl -d /dev/video0 -l")
    #expect(controls.status == 0 && controls.stdout.contains("brightness"), "\(controls.stdout) \(controls.stderr)")
    #expect(!controls.stdout.contains("zoom"), "vivid grew a zoom control: \(controls.stdout)")
    let (config, _) = try Board.makeConfig(name: "zoom-probe")
    let result = try Board.run("\(Board.binary) probe --json --config \(config)")
    #expect(result.status == 0, "\(result.stderr)")
    let report = try JSONDecoder().decode(ProbeJSON.self, from: Data(result.stdout.utf8))
    let camera = try #require(report.cameras.first { $0.path == "/dev/video0" })
    #expect(camera.zoom == "digital only" && camera.zoomControl == nil)
    #expect(camera.croppableFormats == ["YUYV", "NV12"], "\(camera.croppableFormats)")
    let text = try Board.run("\(Board.binary) probe --config \(config)")
    #expect(text.stdout.contains("    zoom: digital only"), "\(text.stdout)")
  }
}
