import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Preview

/// The flips the loop makes of what the workers drew: newest, in order, one at a time, for the screen as it is.
@Suite struct ShowOrderTests {
  static func tag(_ order: Int, generation: Int = 0) -> PreviewTag {
    PreviewTag(order: order, generation: generation, frameNanoseconds: Int64(order))
  }

  @Test func aPictureDrawnAfterANewerOneIsNeverShown() {
    var show = ShowOrder<Int>()
    #expect(show.drawn(Self.tag(2), 2) == nil)
    #expect(show.next(flipPending: false)?.tag.order == 2)
    #expect(show.drawn(Self.tag(1), 1) == 1, "handed over before the one on its way to the screen")
    #expect(show.next(flipPending: false) == nil)
    #expect(show.skipped == 1)
  }

  @Test func whileAFlipIsPendingTheNewestReadyWins() {
    var show = ShowOrder<Int>()
    _ = show.drawn(Self.tag(1), 1)
    _ = show.next(flipPending: false)
    #expect(show.drawn(Self.tag(3), 3) == nil)
    #expect(show.next(flipPending: true) == nil, "one flip at a time")
    #expect(show.drawn(Self.tag(2), 2) == 2, "older than the one ready")
    #expect(show.drawn(Self.tag(4), 4) == 3, "newer than the one ready: that one is given back")
    #expect(show.next(flipPending: false)?.tag.order == 4)
    #expect(show.skipped == 2)
  }

  @Test func aChangeOfScreenMakesWhatWasDrawnStale() {
    var show = ShowOrder<Int>()
    _ = show.drawn(Self.tag(1), 1)
    #expect(show.change() == 1, "the ready picture is for the screen before")
    #expect(show.drawn(Self.tag(2, generation: 0), 2) == 2, "drawn for the screen before")
    #expect(show.drawn(Self.tag(3, generation: 1), 3) == nil)
    #expect(show.drawn(Self.tag(4, generation: 1), 4, showing: false) == 4, "no live picture on screen now")
    #expect(show.next(flipPending: false)?.tag.order == 3)
    #expect(show.skipped == 3)
  }

  /// Workers whose jobs take random times, a loop that flips what comes back as a display would let it:
  /// the flips only ever go forward, and every frame handed over is either shown or counted as skipped.
  @Test(arguments: [1, 2, 3])
  func slowWorkersNeverShowFramesOutOfOrder(workers: Int) {
    let frames = 400
    let results = Mutex<[PreviewTag]>([])
    var generator = SystemRandomNumberGenerator()
    let delays = (0..<frames).map { _ in UInt32.random(in: 0...3000, using: &generator) }
    let handOver = NewestWins<PreviewTag>(workers: workers, name: "test") { _, tag in
      usleep(delays[tag.order])
      results.withLock { $0.append(tag) }
    }
    var show = ShowOrder<Int>()
    var flipped: [Int] = []
    var (taken, neverRun) = (0, 0)
    func takeResults() {
      let tags = results.withLock { pending in
        defer { pending.removeAll() }
        return pending
      }
      taken += tags.count
      for tag in tags { _ = show.drawn(tag, tag.order) }
      // The last flip has completed by now (a vblank between two wake-ups of the loop).
      if let next = show.next(flipPending: false) { flipped.append(next.tag.order) }
    }
    for order in 0..<frames {
      if handOver.submit(Self.tag(order)) != nil {
        show.lost()
        neverRun += 1
      }
      usleep(500)
      takeResults()
    }
    if handOver.stop() != nil {
      show.lost()
      neverRun += 1
    }
    // The jobs the workers still hold come back; the deadline only catches a hang.
    let deadline = monotonicSeconds() + 60
    while taken + neverRun < frames, monotonicSeconds() < deadline {
      usleep(1000)
      takeResults()
    }
    takeResults()
    #expect(taken + neverRun == frames, "every job handed over was run or replaced")
    #expect(flipped == flipped.sorted() && Set(flipped).count == flipped.count, "flips went backwards: \(flipped)")
    #expect(flipped.count + show.skipped == frames, "every frame is shown or counted as skipped")
    #expect(flipped.count > 10, "the preview showed frames at all")
  }

  private func monotonicSeconds() -> Double { ProcessInfo.processInfo.systemUptime }
}
