import CameraRoll
import Capture
import KioskCore
import LinuxIO
import VideoCodec

/// Movies: a recorder from the kiosk's start to its stop, fed the ring's frames the kiosk says belong to the
/// movie. The loop only hands frames over; encoding, writing and fsync are the recorder's workers'.
final class MovieSink: MovieDriver {
  private let config: Config
  private let source: any FrameSource
  private let roll: CameraRoll?
  /// H.264 or Motion-JPEG: `[movie] codec`, and whether the encoder was found.
  let codec: MovieCodec
  private let h264Preset: H264Preset
  private let results: Mailbox<ServiceEvent>
  private let post: (ServiceEvent) -> Void
  /// The movie being recorded, between the kiosk's startMovie and stopMovie.
  private var recorder: MovieRecorder?
  private(set) var saved = 0
  private(set) var failures = 0

  init(
    config: Config, source: any FrameSource, roll: CameraRoll?, codec: MovieCodec, h264Preset: H264Preset,
    results: Mailbox<ServiceEvent>, post: @escaping (ServiceEvent) -> Void
  ) {
    self.config = config
    self.codec = codec
    self.h264Preset = h264Preset
    self.source = source
    self.roll = roll
    self.results = results
    self.post = post
  }

  var isRecording: Bool { recorder != nil }
  /// Frames the recording in progress could not keep up with.
  var dropped: Int { recorder?.dropped ?? 0 }

  func start(at time: Instant) {
    guard let format = source.streamFormat, let roll else {
      post(.kiosk(.movieFailed(reason: "no camera or no roll", at: now())))
      return
    }
    do {
      let recorder = try MovieRecorder(
        roll: roll, width: format.width, height: format.height, frameRate: config.camera.frameRate,
        preset: config.movie.quality, sourceFormat: format.format.fourcc, passthrough: format.format == .mjpeg,
        codec: codec, h264Preset: h264Preset, tag: WallClock.uniqueID())
      self.recorder = recorder
      // The start on CLOCK_MONOTONIC, the clock of the frames: how much a crash lost can be told from the log.
      log(
        "movie recording \(format.format.fourcc) \(format.width)x\(format.height) as \(recorder.width)x\(recorder.height), "
          + "\(recorder.encoding), quality \(config.movie.quality.rawValue), from \(time)")
    } catch {
      post(.kiosk(.movieFailed(reason: "\(error)", at: now())))
    }
  }

  func record(_ frame: FrameInfo) {
    guard let recorder, let captured = source.captured(frame) else { return }
    recorder.submit(captured.still, timestamp: frame.timestamp.nanoseconds, sequence: frame.sequence, crop: captured.crop)
    if let failure = recorder.writeFailure {
      // The kiosk stops the recording at once: the file is kept up to its last whole fragment.
      post(.kiosk(.movieFailed(reason: "write failed: \(failure)", at: now())))
    }
  }

  func stop(at time: Instant) {
    guard let recorder else { return }
    self.recorder = nil
    let results = results
    recorder.stop(at: time.nanoseconds) { result in
      switch result {
      case .success(let summary):
        MovieSummary.report(result)
        results.post(.movieSaved(summary))
      case .failure(let error):
        results.post(.movieFailed("\(error)"))
      }
    }
  }

  /// Stopped by a signal while recording: the movie is finished and published before the service goes.
  func finishAtExit() {
    guard let recorder else { return }
    self.recorder = nil
    MovieSummary.report(recorder.stopAndWait())
  }

  func saved(_ movie: MovieSummary) { saved += 1 }
  func failed() { failures += 1 }

  /// Publishes what crashes left of recordings, before anything new is numbered.
  static func recover(_ roll: CameraRoll) {
    for result in MovieRecorder.recoverInterrupted(roll) {
      switch result {
      case .success:
        MovieSummary.report(result)
      case .failure(let error):
        log("interrupted recording not recovered: \(error)")
      }
    }
  }
}
