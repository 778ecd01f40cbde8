import Testing

@testable import KioskService

/// Which frame review's playback asks the decoder for (`RollPlayer.Playback.next`): the one due, except that an
/// H.264 movie behind the clock moves on in steps the decoder can finish, rather than chasing the due frame.
@Suite struct PlaybackPaceTests {
  typealias Playback = RollPlayer.Playback

  @Test func theFirstFrameAndOneOnTimeAreTheOnesDue() {
    #expect(Playback.next(due: 0, shown: -1, h264: true) == 0)
    #expect(Playback.next(due: 7, shown: 6, h264: true) == 7)
    #expect(Playback.next(due: 7 + Playback.mostDecodedAhead, shown: 7, h264: true) == 7 + Playback.mostDecodedAhead)
  }

  @Test func h264BehindTheClockStepsAtMostTheMostDecodedAhead() {
    #expect(Playback.next(due: 300, shown: -1, h264: true) == Playback.mostDecodedAhead)
    #expect(Playback.next(due: 300, shown: 40, h264: true) == 40 + Playback.mostDecodedAhead)
  }

  @Test func motionJPEGFramesDecodeAloneSoTheDueOneIsAsked() {
    #expect(Playback.next(due: 300, shown: -1, h264: false) == 300)
    #expect(Playback.next(due: 300, shown: 40, h264: false) == 300)
  }
}
