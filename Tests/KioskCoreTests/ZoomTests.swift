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
    var kiosk = Kiosk(settings: KioskSettings(gestures: timing, countdown: .zero, review: .zero, movieMaximum: .seconds(10)))
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
}
