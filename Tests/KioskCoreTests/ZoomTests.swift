import Testing

@testable import KioskCore

@Suite struct ZoomTests {
  @Test func stepsStopAtOneAndAtTheMaximum() {
    var zoom = Zoom(maximum: 200, step: 50)
    #expect(zoom.factor == 100 && zoom.label == "1.0x")
    var changed = zoom.apply(.zoomOut)
    #expect(!changed, "nothing below 1.0x")
    changed = zoom.apply(.zoomIn)
    #expect(changed && zoom.factor == 150 && zoom.label == "1.5x")
    changed = zoom.apply(.zoomIn)
    #expect(changed && zoom.factor == 200)
    changed = zoom.apply(.zoomIn)
    #expect(!changed, "nothing above the maximum")
    changed = zoom.apply(.reset)
    #expect(changed && zoom.factor == 100)
    var odd = Zoom(maximum: 250, step: 100)
    _ = odd.apply(.zoomIn)
    _ = odd.apply(.zoomIn)
    #expect(odd.factor == 250, "the last step stops at the maximum, not past it")
    changed = odd.apply(.zoomOut)
    #expect(changed && odd.factor == 150)
  }

  @Test func fourStepsOfAQuarterAreExactlyTwo() {
    var zoom = Zoom(maximum: 400, step: 25)
    for _ in 0..<4 { _ = zoom.apply(.zoomIn) }
    #expect(zoom.factor == 200 && zoom.label == "2.0x")
  }

  @Test(arguments: [
    // (factor steps of 100 from 1.0x, width, height, expected crop)
    (0, 640, 360, [0, 0, 640, 360]),
    (1, 640, 360, [160, 90, 320, 180]),
    (3, 640, 360, [240, 134, 160, 90]),
    (1, 1920, 1080, [480, 270, 960, 540]),
    (2, 1280, 720, [426, 240, 426, 240]),
  ])
  func theCropIsCentredEvenAndAFactorSmaller(steps: Int, width: Int, height: Int, expected: [Int]) {
    var zoom = Zoom(maximum: 400, step: 100)
    for _ in 0..<steps { _ = zoom.apply(.zoomIn) }
    let crop = zoom.crop(width: width, height: height)
    #expect([crop.x, crop.y, crop.width, crop.height] == expected)
    for value in [crop.x, crop.y, crop.width, crop.height] { #expect(value % 2 == 0) }
    // Centred within a pixel pair: the margins left and right (top and bottom) differ by at most 2.
    #expect(abs(crop.x - (width - crop.x - crop.width)) <= 2 && abs(crop.y - (height - crop.y - crop.height)) <= 2)
  }

  @Test func zoomButtonsAndTheSocketAskTheServiceToZoom() {
    let timing = GestureTiming(debounce: .milliseconds(30), minimumPulse: .milliseconds(5), hold: .milliseconds(800))
    var kiosk = Kiosk(settings: KioskSettings(gestures: timing, countdown: .zero, photoCheck: .zero, movieMaximum: .seconds(10)))
    func ms(_ value: Int64) -> Instant { Instant(nanoseconds: value * 1_000_000) }
    func zooms(_ actions: [Action]) -> [ZoomChange] {
      actions.compactMap { if case .zoom(let change) = $0 { change } else { nil } }
    }
    var actions = kiosk.handle(.edge(.zoomIn, .pressed, at: ms(100)))
    actions += kiosk.handle(.tick(ms(110)))
    actions += kiosk.handle(.edge(.zoomIn, .released, at: ms(200)))
    actions += kiosk.handle(.tick(ms(240)))
    #expect(zooms(actions) == [.zoomIn], "one press, one step")
    actions = kiosk.handle(.edge(.zoomOut, .pressed, at: ms(300)))
    actions += kiosk.handle(.tick(ms(310)))
    #expect(zooms(actions) == [.zoomOut])
    let remote = kiosk.handle(.remote(.zoom(.reset), at: ms(400)))
    #expect(zooms(remote) == [.reset])
    #expect(actions.allSatisfy { if case .saveStill = $0 { false } else { true } }, "a zoom press takes no photo")
  }

  @Test func theControlLineParsesBothWays() {
    for change in ZoomChange.allCases {
      let request = ControlRequest.zoom(change)
      #expect(ControlRequest.parse(request.line) == .success(request))
    }
    #expect(ControlRequest.parse("zoom sideways") == .failure(ControlRequestError("unknown zoom 'sideways' (in, out or reset)")))
  }

  // MARK: The camera's own zoom control, before the digital crop

  /// A UVC webcam's ZOOM_ABSOLUTE 100..500 (step 1) under the default 4.0x in 0.5 steps: six presses walk the
  /// control in equal steps to its end, with no crop; the next six are the digital zoom; out undoes digital first.
  @Test func pressesWalkTheControlFirstThenTheCrop() {
    var zoom = Zoom(maximum: 400, step: 50)
    zoom.useControl(CameraZoomRange(minimum: 100, maximum: 500, step: 1))
    var changed: Bool
    #expect(zoom.opticalSteps == 6 && zoom.controlValue == 100 && !zoom.isZoomed)
    var values: [Int] = []
    for _ in 0..<6 {
      changed = zoom.apply(.zoomIn)
      #expect(changed)
      values.append(zoom.controlValue!)
      #expect(zoom.factor == 100, "no crop while the lens can still zoom")
    }
    #expect(values == [167, 233, 300, 367, 433, 500])
    #expect(zoom.label == "optical 6/6" && zoom.isZoomed)
    let crop = zoom.crop(width: 640, height: 360)
    #expect([crop.x, crop.y, crop.width, crop.height] == [0, 0, 640, 360])
    changed = zoom.apply(.zoomIn)
    #expect(changed)
    #expect(zoom.factor == 150 && zoom.controlValue == 500 && zoom.label == "optical 6/6 + 1.5x")
    for _ in 0..<10 { _ = zoom.apply(.zoomIn) }
    changed = zoom.apply(.zoomIn)
    #expect(zoom.factor == 400 && !changed, "stops at the digital maximum")
    changed = zoom.apply(.zoomOut)
    #expect(changed && zoom.factor == 350 && zoom.controlValue == 500, "out: digital first")
    for _ in 0..<5 { _ = zoom.apply(.zoomOut) }
    #expect(zoom.factor == 100 && zoom.controlValue == 500)
    changed = zoom.apply(.zoomOut)
    #expect(changed && zoom.controlValue == 433, "then the lens")
    changed = zoom.apply(.reset)
    #expect(changed && zoom.controlValue == 100 && zoom.factor == 100 && !zoom.isZoomed)
    #expect(zoom.method == "camera control 100..500 in 6 steps, then digital to 4.0x")
  }

  /// The control's steps land on the driver's grid (minimum + k * step), end at the last value the grid
  /// reaches, and a control with fewer positions than the digital zoom has steps is walked one position a press.
  @Test(arguments: [
    // (minimum, maximum, driver step, expected values after each press until the control's end)
    (0, 3, 1, [1, 2, 3]),
    (0, 100, 10, [20, 30, 50, 70, 80, 100]),
    (10, 65, 4, [18, 26, 38, 46, 54, 62]),
    (-50, 50, 1, [-33, -17, 0, 17, 33, 50]),
  ])
  func controlValuesSitOnTheDriversGrid(minimum: Int, maximum: Int, step: Int, expected: [Int]) {
    var zoom = Zoom(maximum: 400, step: 50)
    zoom.useControl(CameraZoomRange(minimum: minimum, maximum: maximum, step: step))
    #expect(zoom.controlValue == minimum)
    var values: [Int] = []
    while zoom.apply(.zoomIn), zoom.factor == 100 { values.append(zoom.controlValue!) }
    #expect(values == expected)
    for value in values { #expect((value - minimum) % step == 0 && value <= maximum) }
  }

  @Test func withoutAControlOrWithOneOfOnePositionTheZoomIsDigital() {
    var changed: Bool
    for range in [nil, CameraZoomRange(minimum: 100, maximum: 100, step: 1)] {
      var zoom = Zoom(maximum: 400, step: 100)
      zoom.useControl(range?.positions == 0 ? nil : range)
      #expect(zoom.opticalSteps == 0 && zoom.controlValue == nil)
      changed = zoom.apply(.zoomIn)
      #expect(changed && zoom.factor == 200 && zoom.label == "2.0x")
      #expect(zoom.method == "digital to 4.0x")
    }
    var off = Zoom(maximum: 100, step: 50)
    off.useControl(CameraZoomRange(minimum: 100, maximum: 500, step: 1))
    changed = off.apply(.zoomIn)
    #expect(off.opticalSteps == 0 && !changed, "zoom-maximum 1.0 is no zoom at all, lens included")
  }

  /// Another camera's control means nothing at this one's step: a change starts from the widest; the same
  /// control (the camera came back) keeps the step for the service to set again.
  @Test func aDifferentControlStartsWideTheSameKeepsItsStep() {
    var zoom = Zoom(maximum: 400, step: 50)
    let lens = CameraZoomRange(minimum: 0, maximum: 60, step: 1)
    zoom.useControl(lens)
    _ = zoom.apply(.zoomIn)
    _ = zoom.apply(.zoomIn)
    zoom.useControl(lens)
    #expect(zoom.opticalStep == 2 && zoom.controlValue == 20)
    zoom.useControl(nil)
    #expect(zoom.opticalStep == 0 && zoom.factor == 100 && zoom.controlValue == nil)
    _ = zoom.apply(.zoomIn)
    #expect(zoom.factor == 150)
    zoom.useControl(lens)
    #expect(zoom.factor == 100 && zoom.opticalStep == 0, "no digital zoom before the lens's")
  }

  /// A sensor crop (libcamera's ScalerCrop) does the digital steps itself, as far as its range goes: no
  /// optical steps of its own, EXIF's factor the whole one, and only what lies beyond its range cut from frames.
  @Test func aSensorCropDoesTheDigitalStepsAndFramesAreCutOnlyBeyondIt() {
    var zoom = Zoom(maximum: 400, step: 50)
    zoom.useControl(CameraZoomRange(minimum: 100, maximum: 250, step: 1, kind: .sensorCrop))
    #expect(zoom.opticalSteps == 0 && zoom.controlValue == 100 && zoom.controlSetting == "sensor crop 1.0x")
    #expect(zoom.method == "sensor crop to 2.5x, then digital to 4.0x")
    var seen: [(factor: Int, sensor: Int?, cut: Bool)] = []
    while zoom.apply(.zoomIn) { seen.append((zoom.factor, zoom.controlValue, zoom.cutsFrames)) }
    #expect(seen.map(\.factor) == [150, 200, 250, 300, 350, 400], "the digital zoom's own steps")
    #expect(seen.map(\.sensor) == [150, 200, 250, 250, 250, 250])
    #expect(seen.map(\.cut) == [false, false, false, true, true, true])
    #expect(zoom.label == "4.0x" && zoom.digitalLabel == "4.0x", "the whole factor: the picture is 4x")
    // At 4.0x with 2.5x done on the sensor, a frame is cut by the 1.6x left: 640x360 keeps 400x224.
    let crop = zoom.crop(width: 640, height: 360)
    #expect([crop.x, crop.y, crop.width, crop.height] == [120, 68, 400, 224])
    #expect(zoom.decodeCover(shownWidth: 640, shownHeight: 360) == (1024, 576))
    _ = zoom.apply(.zoomOut)
    _ = zoom.apply(.zoomOut)
    _ = zoom.apply(.zoomOut)
    let whole = zoom.crop(width: 640, height: 360)
    #expect(zoom.factor == 250 && !zoom.cutsFrames && [whole.x, whole.y, whole.width, whole.height] == [0, 0, 640, 360])
    #expect(zoom.decodeCover(shownWidth: 640, shownHeight: 360) == (640, 360), "the camera already zoomed")
    _ = zoom.apply(.reset)
    #expect(zoom.controlValue == 100, "back to the widest crop, asked for, not left as it was")

    var wide = Zoom(maximum: 300, step: 100)
    wide.useControl(CameraZoomRange(minimum: 100, maximum: 5_000, step: 1, kind: .sensorCrop))
    #expect(wide.method == "sensor crop to 3.0x")
    while wide.apply(.zoomIn) {}
    #expect(wide.factor == 300 && wide.controlValue == 300 && !wide.cutsFrames, "never beyond the configured maximum")
  }

  /// 1080p MJPEG shown 640x360: unzoomed a 1/2 DCT scale covers it (960x540); at 2.0x only the centre half
  /// of each side is shown, so the frame must cover 1280x720, which only the whole decode does.
  @Test func aZoomedDecodeCoversTheScreenTimesTheFactor() {
    var zoom = Zoom(maximum: 400, step: 50)
    #expect(zoom.decodeCover(shownWidth: 640, shownHeight: 360) == (640, 360))
    _ = zoom.apply(.zoomIn)
    _ = zoom.apply(.zoomIn)
    #expect(zoom.decodeCover(shownWidth: 640, shownHeight: 360) == (1280, 720))
    _ = zoom.apply(.zoomIn)
    #expect(zoom.decodeCover(shownWidth: 641, shownHeight: 361) == (1603, 903), "rounded up: never short of cover")
  }
}
