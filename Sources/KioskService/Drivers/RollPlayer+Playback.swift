#if canImport(Glibc)
  import Glibc
#endif
import Capture
import Imaging
import LinuxIO
import MediaFiles

/// A movie frame decoded on the viewer queue for review's playback, back on the loop to be shown.
struct PlaybackFrame: Sendable {
  /// Which playback asked: a frame for one that has since stopped is dropped.
  let playback: Int
  let number: Int
  let picture: Result<FittedPicture, PlaybackError>
}

struct PlaybackError: Error, Sendable, CustomStringConvertible {
  let description: String
}

extension RollPlayer {
  /// A movie playing: its sample table (the loop's, to know which frame is due), its decoder (the viewer
  /// queue's alone: opening the file and decoding, H.264 or JPEG, is disk and CPU work the loop never
  /// waits on), and when its first frame was shown (CLOCK_MONOTONIC).
  final class Playback {
    let path: String
    let index: MovieIndex
    let start: Int64
    let decoder: PlaybackDecoder
    var shown = -1
    /// A frame is being decoded: the next is asked for only when it is back (newest due wins, never a queue).
    var decoding = false

    /// Counted, not an object's address: a stopped playback's frame still on its way must not pass for the
    /// next one's.
    let id: Int

    /// The most H.264 frames one request decodes past the one shown (half a second at 30 a second).
    static let mostDecodedAhead = 15

    /// The frame to ask the decoder for when `due` is due and `shown` is on screen. A Motion-JPEG frame is
    /// decoded alone: the one due. An H.264 frame needs every one before it: on a board that decodes slower than
    /// the movie plays, asking for the one due would decode ever longer runs while it moved further away (the
    /// screen kept the first frame for 8 of a movie's 15 s), so a request stops at most `mostDecodedAhead`
    /// frames on, and the screen moves on behind the clock.
    static func next(due: Int, shown: Int, h264: Bool) -> Int {
      h264 ? min(due, max(0, shown) + mostDecodedAhead) : due
    }

    init(id: Int, path: String, index: MovieIndex, file: String, start: Int64) {
      self.id = id
      self.path = path
      self.index = index
      self.start = start
      decoder = PlaybackDecoder(file: file, index: index)
    }
  }

  /// The movie's file and decoder, opened on first use on the viewer queue and used only there.
  final class PlaybackDecoder: @unchecked Sendable {
    // Unchecked: only the viewer queue (serial) touches `frames`.
    private let file: String
    private let index: MovieIndex
    private var frames: MovieFrames?

    init(file: String, index: MovieIndex) {
      self.file = file
      self.index = index
    }

    func picture(_ number: Int, screenWidth: Int, screenHeight: Int, orientation: PreviewOrientation) -> Result<
      FittedPicture, PlaybackError
    > {
      do {
        if frames == nil {
          let fd = try OwnedFD(opening: file, flags: O_RDONLY | O_CLOEXEC)
          frames = try MovieFrames(index) { sample in try fd.read(at: sample.offset, count: sample.size) }
        }
        return .success(
          try frames!.picture(number, screenWidth: screenWidth, screenHeight: screenHeight, orientation: orientation))
      } catch {
        return .failure(PlaybackError(description: "\(error)"))
      }
    }
  }
}
