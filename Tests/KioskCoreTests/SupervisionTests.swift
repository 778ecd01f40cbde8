import KioskCore
import Testing

@Suite struct NotifyMessageTests {
  @Test func eachAssignmentIsOneLine() {
    #expect(NotifyMessage.ready.line == "READY=1")
    #expect(NotifyMessage.stopping.line == "STOPPING=1")
    #expect(NotifyMessage.watchdog.line == "WATCHDOG=1")
    #expect(NotifyMessage.status("Camera not available").line == "STATUS=Camera not available")
  }

  @Test func aStatusCannotSmuggleInAnotherAssignment() {
    #expect(NotifyMessage.status("lost\nREADY=1\r").line == "STATUS=lost READY=1 ")
  }

  @Test func severalAssignmentsMakeOneDatagram() {
    #expect(NotifyMessage.datagram([.ready, .status("streaming")]) == "READY=1\nSTATUS=streaming")
    #expect(NotifyMessage.datagram([]) == "")
  }

  @Test(arguments: [
    (usec: "10000000", pid: nil, expected: Duration.seconds(5)),
    (usec: "10000000", pid: "42", expected: Duration.seconds(5)),
    (usec: "10000000", pid: "", expected: Duration.seconds(5)),
    (usec: "10000000", pid: "43", expected: nil),
    (usec: "0", pid: nil, expected: nil),
    (usec: "ten", pid: nil, expected: nil),
    (usec: "-5", pid: nil, expected: nil),
  ] as [(usec: String, pid: String?, expected: Duration?)])
  func watchdogIntervalIsHalfOfWhatSystemdSet(usec: String, pid: String?, expected: Duration?) {
    #expect(watchdogPetInterval(usec: usec, pid: pid, ownPID: 42) == expected)
  }

  @Test func noWatchdogWithoutTheVariable() {
    #expect(watchdogPetInterval(usec: nil, pid: nil, ownPID: 42) == nil)
  }
}

@Suite struct SupervisionTests {
  @Test func readyOnlyOnceTheFirstFrameIsOnTheDisplay() {
    var rule = Supervision()
    // Frames arrive, but the first flip has not completed yet.
    #expect(rule.frameArrived(previewShown: false, previewExpected: true) == [])
    #expect(!rule.isReady)
    #expect(rule.frameArrived(previewShown: true, previewExpected: true)
      == [.ready, .status("streaming, preview on the display")])
    #expect(rule.frameArrived(previewShown: true, previewExpected: true) == [])
  }

  @Test func headlessIsReadyAtTheFirstGoodFrame() {
    var rule = Supervision()
    #expect(rule.frameArrived(previewShown: false, previewExpected: false) == [.ready, .status("streaming")])
  }

  @Test func aCameraAbsentAtStartIsAReadyScreenStateNotAStartTimeout() {
    var rule = Supervision()
    #expect(rule.cameraUnavailable("not found") == [.ready, .status("Camera not available: not found")])
    #expect(rule.watchdogTick() == [.watchdog])
    #expect(rule.watchdogTick() == [.watchdog])
  }

  @Test func theWatchdogIsPettedOnlyWhileFramesArrive() {
    var rule = Supervision()
    _ = rule.frameArrived(previewShown: false, previewExpected: false)
    #expect(rule.watchdogTick() == [.watchdog])
    // A stall: the camera is open and nothing comes. Said once, and the watchdog starves.
    #expect(rule.watchdogTick() == [.status("camera stalled: no frame since the last watchdog period, watchdog not petted")])
    #expect(rule.watchdogTick() == [])
    #expect(rule.watchdogTick() == [])
    // Frames again before the supervisor acted: petting resumes.
    #expect(rule.frameArrived(previewShown: false, previewExpected: false) == [.status("streaming")])
    #expect(rule.watchdogTick() == [.watchdog])
  }

  @Test func aPulledCameraKeepsThePetsComingUntilItIsBack() {
    var rule = Supervision()
    _ = rule.frameArrived(previewShown: true, previewExpected: true)
    #expect(rule.cameraUnavailable("unplugged") == [.status("Camera not available: unplugged")])
    for _ in 0..<5 { #expect(rule.watchdogTick() == [.watchdog]) }
    #expect(rule.frameArrived(previewShown: true, previewExpected: true) == [.status("streaming")])
    #expect(rule.watchdogTick() == [.watchdog])
    // Back and then stalled: that one is a restart again.
    #expect(rule.watchdogTick() != [.watchdog])
  }

  @Test func beforeTheFirstFrameNothingIsPetted() {
    var rule = Supervision()
    #expect(rule.watchdogTick() != [.watchdog])
    #expect(!rule.isReady)
  }

  @Test func stoppingSaysSo() {
    #expect(Supervision().stopping() == [.stopping, .status("stopping")])
  }
}

/// The movie camera's rate from its timestamps: what `movie-camera` is judged by.
struct MeasuredRateTests {
  static func stamps(_ milliseconds: [Int64]) -> [Instant] { milliseconds.map { Instant(nanoseconds: $0 * 1_000_000) } }
  static func ms(_ value: Int64) -> Instant { Instant(nanoseconds: value * 1_000_000) }

  @Test func aSteadyStreamMeasuresItsRate() throws {
    // 51 frames 40 ms apart after a first frame held 300 ms by the driver: 25 fps, the start-up stall left out.
    let steady: [Int64] = [0] + (0...50).map { (index: Int64) -> Int64 in 300 + index * 40 }
    let rate = try #require(MeasuredRate(timestamps: Self.stamps(steady), end: Self.ms(2300)))
    #expect(abs(rate.framesPerSecond - 25) < 1e-9)
    #expect(rate.frames == 51)
    #expect(rate.span == .milliseconds(2000))
    #expect(rate.suffices(for: 25))
    #expect(!rate.suffices(for: 30))
  }

  @Test func aCameraThatStallsAfterABurstMeasuresAsSlowAsItIs() throws {
    // Four buffers delivered at 100 fps, then none (a driver keeping its buffers): not a 100 fps camera.
    let rate = try #require(MeasuredRate(timestamps: Self.stamps([0, 10, 20, 30]), end: Self.ms(2000)))
    #expect(rate.framesPerSecond < 1.1)
    #expect(!rate.suffices(for: 10))
  }

  @Test func burstsAverageOutButDroppedFramesCount() throws {
    // Bursts of two 16 ms apart every 80 ms: 25 fps on average, as vivid delivers under emulation.
    let bursty: [Int64] = (0..<50).map { (index: Int) -> Int64 in Int64(index / 2 * 80 + index % 2 * 16) }
    let rate = try #require(MeasuredRate(timestamps: Self.stamps(bursty), end: Self.ms(2000)))
    #expect(abs(rate.framesPerSecond - 25) < 1.0)
    // Every other frame of a 25 fps stream never comes: 12.5 fps, not enough for 25, enough for 12.
    let everyOther: [Int64] = (0...50).map { (index: Int) -> Int64 in Int64(index * 80) }
    let halved = try #require(MeasuredRate(timestamps: Self.stamps(everyOther), end: Self.ms(4000)))
    #expect(!halved.suffices(for: 25))
    #expect(halved.suffices(for: 12))
    // 90% of the wanted rate is the edge: 22.5 fps passes for 25, 22.4 does not.
    func steady(interval: Int64) -> (stamps: [Instant], end: Instant) {
      ((0...10).map { (index: Int64) in Instant(nanoseconds: index * interval) }, Instant(nanoseconds: 10 * interval))
    }
    let edge = steady(interval: 44_444_444)
    #expect(try #require(MeasuredRate(timestamps: edge.stamps, end: edge.end)).suffices(for: 25))
    let below = steady(interval: 44_642_857)
    #expect(try !#require(MeasuredRate(timestamps: below.stamps, end: below.end)).suffices(for: 25))
  }

  @Test func tooFewFramesAreNoRate() {
    #expect(MeasuredRate(timestamps: [], end: Self.ms(2000)) == nil)
    #expect(MeasuredRate(timestamps: Self.stamps([0, 40]), end: Self.ms(2000)) == nil, "the first frame does not count")
    #expect(MeasuredRate(timestamps: Self.stamps([0, 40, 80]), end: Self.ms(40)) == nil, "ended before it began")
  }
}
