import Foundation
import Testing

/// The board's USB webcam through libcamera (`[camera] backend = libcamera`): libcamera's uvcvideo pipeline, over
/// the same uvcvideo driver the V4L2 backend uses, from the host's libcamera (Debian 12's 0.0.3; the Pi's is
/// trixie's 0.4.0, checked by make pi-test). The webcam's own log of every frame it sent is the oracle for the
/// still and the movie; libcamera's own tool, `cam`, for the camera libcamera lists.
extension BoardDeviceTests {
  /// libcamera's id of the webcam: its controller's ACPI path (the board's dummy_hcd sits under the PCI host
  /// bridge, board/virtual/modules/dummy-hcd.sh), its USB port and interface, its vendor and product.
  static let libcameraWebcam = #"\_SB_.PCI0-1:1.0-1d6b:0102"#

  /// The webcam at 640x360 MJPEG through libcamera, movie mode allowed at 3 fps or more (Motion-JPEG passthrough).
  func libcameraWebcamConfig(_ name: String, device: String = "auto") throws -> (config: String, roll: String) {
    try Board.makeConfig(name: name) {
      $0.replacingOccurrences(
        of: "device = auto\nformat = yuyv\nsize = 640x360\n",
        with: "backend = libcamera\ndevice = \(device)\nformat = mjpeg\nsize = 640x360\n"
      )
      .replacingOccurrences(of: "optional = display, mode-button", with: "optional = display, mode-button, movie-camera")
        + "[movie]\nsize = 640x360\nframe-rate = 3\nmaximum-duration-s = 600\nquality = high\ncodec = mjpeg\n"
    }
  }

  /// libcamera's own tool and `kioskcam probe` list the same camera, and the probe passes it for stills and
  /// movies at the configured format and size.
  func expectLibcameraListsTheWebcam(config: String) throws {
    let listed = try Board.run("cam --list 2>&1")
    #expect(
      listed.stdout.contains("'Board Webcam: Board Webcam' (\(Self.libcameraWebcam))"), "cam --list: \(listed.stdout)")
    let sentBefore = try Board.webcamFrames().last?.counter ?? 0
    let probe = try Board.run("\(Board.binary) probe --config \(config)")
    #expect(probe.status == 0, "\(probe.stderr)")
    let libcamera = probe.stdout.components(separatedBy: "\nlibcamera:\n").dropFirst().first ?? ""
    #expect(libcamera.contains("libcamera v0.0.3"), "\(probe.stdout)")
    // cam lists no control of the webcam's (libcamera's uvcvideo pipeline maps none of its zoom control).
    let controls = try Board.run("LIBCAMERA_LOG_LEVELS='*:ERROR' cam --camera 1 --list-controls 2>&1")
    let controlLines = controls.stdout.split(separator: "\n").filter { !$0.hasPrefix("Using camera ") }
    #expect(controls.status == 0 && controlLines.isEmpty, "\(controls.stdout)")
    #expect(libcamera.contains("\(Self.libcameraWebcam): Board Webcam: Board Webcam, external, controls: none used"), "\(libcamera)")
    #expect(libcamera.contains("MJPEG (MJPG): 640x360 1280x720 1920x1080"), "\(libcamera)")
    let verdict = probe.stdout.split(separator: "\n").first { $0.contains("still-camera (required): ") }
    #expect(
      verdict?.hasSuffix("ok: libcamera v0.0.3: \(Self.libcameraWebcam) (Board Webcam: Board Webcam): MJPEG 640x360")
        == true, "\(verdict ?? "no still-camera verdict"): \(probe.stdout)")
    let movie = probe.stdout.split(separator: "\n").first { $0.contains("movie-camera (optional): ") }.map(String.init)
    #expect(movie?.contains("ok: libcamera v0.0.3: \(Self.libcameraWebcam) (Board Webcam: Board Webcam): MJPEG 640x360: ") == true, "\(movie ?? "no movie-camera verdict")")
    try expectTheMeasuredRateIsWhatTheWebcamSent(movie ?? "", sentAfter: sentBefore)
  }

  /// The movie camera's rate, measured through libcamera, against the webcam's own log of what it sent: the
  /// probe alone streamed it, so the frames sent after `sentAfter` are the ones measured. Never more than
  /// the webcam sent; a little less is the measurement's end after the last frame, or frames uvcvideo dropped.
  func expectTheMeasuredRateIsWhatTheWebcamSent(_ verdict: String, sentAfter: Int) throws {
    let words = verdict.components(separatedBy: " fps measured over ").first?.split(separator: " ")
    let measured = try #require(words?.last.flatMap { Double($0) }, "no measured rate: \(verdict)")
    let sent = try Board.webcamFrames().filter { $0.counter > sentAfter }
    let first = try #require(sent.first, "the webcam sent nothing while the probe measured")
    let span = (sent.last?.writeStarted ?? first.writeStarted) - first.writeStarted
    try #require(sent.count >= 3 && span > 0, "\(sent.count) frames sent")
    let sentRate = Double(sent.count - 1) / span
    print("libcamera movie camera: \(measured) fps measured, webcam sent \(sent.count) frames at \(String(format: "%.2f", sentRate)) fps")
    #expect(measured <= sentRate * 1.1 && measured >= sentRate * 0.5, "measured \(measured), sent \(sentRate): \(verdict)")
  }

  /// One service streaming the webcam through libcamera: its bars on screen, a still that is the webcam's
  /// frame nearest the press (by the webcam's own send log, the scan byte for byte), a movie of the webcam's
  /// frames in order; then the webcam pulled ("Camera not available", the service up) and plugged back
  /// (streaming again, a still of a frame sent after the return).
  @Test func libcameraStreamsTheWebcamIntoThePreviewAStillAndAMovie() throws {
    try Board.plugWebcam()
    defer { Board.leaveWebcamUnplugged() }
    let (config, roll) = try libcameraWebcamConfig("libcamera-webcam")
    try expectLibcameraListsTheWebcam(config: config)
    try Board.withService("libcamera-webcam", config: config) {
      let log = try Board.logs("libcamera-webcam")
      #expect(log.contains("kioskcam: camera \(Self.libcameraWebcam) MJPG 640x360 streaming"), "\(log)")
      // 640x360 scaled to 1280x720 fills the 1280x800 screen from y 40, as the webcam's 1280x720 does.
      var mismatches = ["no screendump yet"]
      try Board.waitFor("the webcam's bars on screen through libcamera", seconds: 120) {
        mismatches = VividBars.mismatches(in: try Board.screendump().pixel, x: 0, width: 1280, y: 400)
        return mismatches.isEmpty
      }
      #expect(mismatches.isEmpty, "\(mismatches)")
      // The start measured the movie camera through the service's one camera manager, then opened the camera
      // for stills through it: a second manager, or the camera still held, would have left it unmeasured.
      let capabilities = try Board.status()["capabilities"] as? [[String: Any]] ?? []
      let movieVerdict = capabilities.first { $0["name"] as? String == "movie-camera" }?["evidence"] as? String ?? ""
      #expect(movieVerdict.contains(" fps measured over ") && movieVerdict.hasSuffix(", 3 fps wanted"), "\(capabilities)")

      let pressedAt = try press("libcamera-webcam", expecting: "DCIM/100KIOSK/IMG_0001.JPG")
      let still = "\(roll)/DCIM/100KIOSK/IMG_0001.JPG"
      let frame = try #require(try webcamFrame(of: still), "the still's scan is one the webcam sent")
      #expect(frame.size == "640x360")
      let sent = try expectTheWebcamsFrameNearest(pressedAt, in: frame, service: "libcamera-webcam")
      try expectAWebcamStill(still, size: "640x360")
      print("libcamera still: webcam frame \(frame.counter), sent \(String(format: "%.0f", sent * 1000)) ms from the press")

      let sentBefore = try Board.webcamFrames().last?.counter ?? 0
      _ = try startRecording("libcamera-webcam")
      try Board.waitFor("frames recorded") { try (Board.webcamFrames().last?.counter ?? 0) > sentBefore + 30 }
      #expect(try Board.control("shutter").status == 0)
      let file = "DCIM/100KIOSK/IMG_0002.MOV"
      try Board.waitFor(file) { try loggedMovie("libcamera-webcam", file) != nil }
      let logged = try #require(try loggedMovie("libcamera-webcam", file))
      let movie = try probeMovie("\(roll)/\(file)")
      #expect(movie.codec == "mjpeg" && movie.frames == logged.frames && movie.frames > 0 && movie.ffmpeg.isEmpty, "\(movie) \(logged)")
      let frames = try webcamFrames(of: "\(roll)/\(file)")
      #expect(frames.count == logged.frames)
      #expect(frames.allSatisfy { $0 != nil }, "every frame is one the webcam sent: \(frames.map { $0?.counter ?? -1 })")
      let counters = frames.compactMap { $0?.counter }
      #expect(counters == counters.sorted() && Set(counters).count == counters.count, "in the order sent, once each: \(counters)")
      #expect(counters.allSatisfy { $0 > sentBefore }, "none sent before the recording: \(counters), \(sentBefore)")
      let dropped = try #require(try movieRecord(in: roll, file)["droppedFrames"] as? Int)
      let (first, last) = (counters.first ?? 0, counters.last ?? 0)
      #expect(counters.count + dropped >= last - first + 1, "\(counters.count) frames + \(dropped) dropped for \(first)...\(last)")
      print("libcamera movie: \(logged.frames) frames in \(logged.seconds) s, webcam frames \(first)...\(last), dropped \(dropped)")

      // libcamera writes its own complaints to the service's stderr: none while the camera streamed, a still was
      // taken and a movie recorded.
      let complaints = try Board.logs("libcamera-webcam").split(separator: "\n").filter {
        $0.hasPrefix("[") && $0.contains(" ERROR ")
      }
      #expect(complaints.isEmpty, "libcamera's errors: \(complaints)")

      try Board.unplugWebcam()
      try Board.waitForLine("kioskcam: camera lost: libcamera: \(Self.libcameraWebcam): camera removed", in: "libcamera-webcam")
      try expectMessageOnScreen("Camera not available")
      #expect(try Board.status()["screen"] as? String == "Camera not available")

      try Board.plugWebcam()
      let plugged = Date()
      try Board.waitOnShare("the camera back", seconds: 120) { try Board.logs("libcamera-webcam").contains("kioskcam: camera back") }
      print("libcamera return: the service streamed again \(String(format: "%.1f", Date().timeIntervalSince(plugged))) s after the node was there")
      try press("libcamera-webcam", expecting: "DCIM/100KIOSK/IMG_0003.JPG")
      // The webcam's log starts again at each plug: a frame found in it is one sent after the return.
      let after = try #require(try webcamFrame(of: "\(roll)/DCIM/100KIOSK/IMG_0003.JPG"), "a frame sent since the replug")
      print("libcamera after the return: webcam frame \(after.counter)")
      let stopped = try Board.kill("libcamera-webcam")
      #expect(stopped.stdout.contains("exited 0"), "up all along, then stopped cleanly: \(stopped.stdout)")
    }
  }

  /// A libcamera id that is not there, and the webcam held by another program (libcamera's own cam): the service
  /// does not start, and says why (exit 69, the reason naming the cameras libcamera has, or libcamera's words).
  @Test func aLibcameraCameraNotThereOrHeldIsExit69WithTheReason() throws {
    try Board.plugWebcam()
    defer { Board.leaveWebcamUnplugged() }
    let (missing, _) = try libcameraWebcamConfig("libcamera-missing", device: "/base/soc/i2c0mux/i2c@1/imx219@10")
    let run = try Board.run("timeout 120 \(Board.binary) run --config \(missing)")
    #expect(run.status == 69, "\(run.status): \(run.stderr)")
    #expect(
      run.stderr.contains("no camera /base/soc/i2c0mux/i2c@1/imx219@10: has \(Self.libcameraWebcam)"), "\(run.stderr)")

    let (config, _) = try libcameraWebcamConfig("libcamera-held")
    let held = try Board.run(
      "LIBCAMERA_LOG_LEVELS='*:ERROR' timeout 60 cam --camera 1 --capture=1000 > /tmp/kioskcam-cam.log 2>&1 & cam=$!; "
        + "for i in $(seq 100); do grep -q 'seq:' /tmp/kioskcam-cam.log && break; sleep 0.2; done; "
        + "timeout 120 \(Board.binary) run --config \(config); status=$?; kill $cam; exit $status")
    #expect(held.status == 69, "\(held.status): \(held.stderr)")
    #expect(
      held.stderr.contains("still-camera (required): libcamera: acquire \(Self.libcameraWebcam): Device or resource busy"),
      "\(held.stderr)")
  }
}

extension BoardDeviceTests {
  /// The libcamera backend as the shipped unit runs it (guest-systemd.sh's systemd: `DevicePolicy=closed` and the
  /// rest of the sandbox). libcamera opens the webcam's media controller node as well as its video node, so the
  /// unit must allow both: the service streams the webcam and saves a still of a frame the webcam sent (by its
  /// send log), which exiftool and jpeginfo pass.
  @Test func theLibcameraBackendRunsUnderTheShippedUnit() throws {
    try Board.plugWebcam()
    defer { Board.leaveWebcamUnplugged() }
    _ = try Puller.installAppliance()
    // The next test finds the board's own configuration in /etc/kioskcam.
    defer { _ = try? Puller.installAppliance() }
    let (config, _) = try libcameraWebcamConfig("libcamera-unit")
    // The appliance's roll, the one place the unit may write.
    let text = try String(contentsOfFile: config, encoding: .utf8)
      .replacingOccurrences(of: "\(Board.share!)/libcamera-unit-roll", with: Puller.roll)
    try text.write(toFile: config, atomically: true, encoding: .utf8)
    let installed = try Board.run(
      "install -m 0644 \(config) /etc/kioskcam/kioskcam.conf && find \(Puller.roll) -mindepth 1 -delete")
    try #require(installed.status == 0, "\(installed.stderr)")
    let service = try Service.start()
    defer { _ = try? Service.systemctl("stop kioskcam.service") }
    let journal = try service.journal()
    #expect(journal.contains("kioskcam: camera \(Self.libcameraWebcam) MJPG 640x360 streaming"), "\(journal)")

    #expect(try Board.control("shutter").status == 0)
    let still = "\(Puller.roll)/DCIM/100KIOSK/IMG_0001.JPG"
    try Board.waitFor(still) { try Board.run("test -f \(still)").status == 0 }
    let copy = "\(Board.share!)/libcamera-unit.jpg"
    try #require(try Board.run("cp \(still) \(copy)").status == 0)
    let frame = try #require(try webcamFrame(of: copy), "the still's scan is one the webcam sent")
    #expect(frame.size == "640x360")
    try expectAWebcamStill(copy, size: "640x360")
  }
}
