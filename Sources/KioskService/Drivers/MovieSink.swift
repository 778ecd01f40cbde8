import CameraRoll
import Capture
import Dispatch
import Imaging
import KioskCore
import LinuxIO
import Sound
import Synchronization
import VideoCodec

/// Movies: a recorder from the kiosk's start to its stop, fed the ring's frames the kiosk says belong to the
/// movie. The loop only hands frames over; opening the file, encoding, writing and fsync are workers'.
///
/// Opening a recording is disk work (the hidden file created, its folder and header fsynced: over a second on
/// a card that takes 200 ms a write), so it runs on `opener`; the frames that come meanwhile wait in a queue
/// as long as the recorder's, and frames past it, like frames the camera lost between two the movie got (a
/// gap in the driver's sequence numbers), count as dropped.
final class MovieSink: MovieDriver {
  private let config: Config
  private let source: any FrameSource
  private let roll: CameraRoll?
  /// H.264 or Motion-JPEG: `[movie] codec`, and whether the encoder was found.
  let codec: MovieCodec
  /// The V4L2 encoder the `h264-encoder` probe tried, or x264 at the preset it measured.
  private let h264Encoder: H264EncoderChoice
  /// The microphone the `microphone` probe opened, recorded into H.264 movies; nil: silent movies.
  private let microphone: SoundFormat?
  private let results: Mailbox<ServiceEvent>
  private let post: (ServiceEvent) -> Void
  private let opener = DispatchQueue(label: "kioskcam.movie-open")
  /// Recordings stopped and not yet finished: the recovery when the storage is back waits for them, so that
  /// it never takes a file its recorder is still closing.
  private let finishing = DispatchGroup()

  /// The recorder once the opener has it; the loop takes the lock only to look.
  private final class Opening: Sendable {
    let recorder = Mutex<MovieRecorder?>(nil)
    /// The microphone's thread, feeding the recorder's sound; stopped once the movie is finished.
    let sound = Mutex<SoundCapture?>(nil)

    func stopSound() {
      let capture = sound.withLock { current in
        defer { current = nil }
        return current
      }
      capture?.stop()
    }
  }

  /// A frame taken while the recording was still being opened.
  private struct Waiting: Sendable {
    let still: StillFrame
    let timestamp: Int64
    let sequence: UInt32
    let crop: PixelRect?
  }

  /// The movie being recorded, between the kiosk's startMovie and stopMovie.
  private var current: Opening?
  private var waiting: [Waiting] = []
  /// Dropped before the recorder could count them: frames past the waiting queue, and sequence gaps.
  private var droppedHere = 0
  private var lastSequence: UInt32?
  /// The kiosk was told this recording reached the roll's largest file: once, until the stop it asks for.
  private var fileFullPosted = false
  /// How many of the camera's frames the movie takes, the viewfinder first.
  private var pace: RecordingPace
  private(set) var saved = 0
  private(set) var failures = 0

  init(
    config: Config, source: any FrameSource, roll: CameraRoll?, codec: MovieCodec,
    h264Encoder: H264EncoderChoice = .unprobed, microphone: SoundFormat? = nil, results: Mailbox<ServiceEvent>,
    post: @escaping (ServiceEvent) -> Void
  ) {
    self.config = config
    self.microphone = codec == .h264 ? microphone : nil
    self.codec = codec
    self.h264Encoder = h264Encoder
    self.source = source
    self.roll = roll
    self.results = results
    self.post = post
    pace = RecordingPace(cameraRate: config.camera.frameRate)
  }

  var isRecording: Bool { current != nil }
  /// Frames the recording in progress could not keep up with, or the camera lost.
  var dropped: Int { (current?.recorder.withLock { $0?.dropped } ?? 0) + droppedHere }

  func start(at time: Instant) {
    guard let format = source.streamFormat, let roll else {
      post(.kiosk(.movieFailed(reason: "no camera or no roll", at: now())))
      return
    }
    let opening = Opening()
    current = opening
    waiting = []
    droppedHere = 0
    lastSequence = nil
    fileFullPosted = false
    log(pace.start(budget: CPUUse.cores()))
    let (frameRate, quality, codec, h264Encoder, microphone, results) = (
      config.camera.frameRate, config.movie.quality, codec, h264Encoder, microphone, results
    )
    opener.async {
      do {
        let recorder = try MovieRecorder(
          roll: roll, width: format.width, height: format.height, frameRate: frameRate, preset: quality,
          sourceFormat: format.format.fourcc, passthrough: format.format == .mjpeg, codec: codec,
          h264Encoder: h264Encoder, sound: microphone.map { SoundInput(sampleRate: $0.sampleRate, channels: $0.channels) },
          tag: WallClock.uniqueID())
        opening.recorder.withLock { $0 = recorder }
        if let microphone, let sound = recorder.sound { Self.listen(microphone, into: sound, opening, results: results) }
        // The start on CLOCK_MONOTONIC, the clock of the frames: how much a crash lost can be told from the log.
        log(
          "movie recording \(format.format.fourcc) \(format.width)x\(format.height) as \(recorder.width)x\(recorder.height), "
            + "\(recorder.encoding), quality \(quality.rawValue), from \(time)")
      } catch {
        results.post(.movieFailed("\(error)"))
        results.reportCardFailure(error, during: .movie)
      }
    }
  }

  func record(_ frame: FrameInfo) {
    guard let current else { return }
    if let last = lastSequence, frame.sequence > last &+ 1 { droppedHere += Int(frame.sequence - last - 1) }
    lastSequence = frame.sequence
    // Asked before the frame is copied out of the ring: a frame the movie leaves costs the viewfinder nothing.
    guard pace.take(), let captured = source.captured(frame) else {
      droppedHere += 1
      return
    }
    let next = Waiting(
      still: captured.still, timestamp: frame.timestamp.nanoseconds, sequence: frame.sequence, crop: captured.crop)
    guard let recorder = current.recorder.withLock({ $0 }) else {
      if waiting.count < MovieRecorder.queueBound { waiting.append(next) } else { droppedHere += 1 }
      return
    }
    hand(waiting + [next], to: recorder)
    waiting = []
    if !fileFullPosted, recorder.reachedLargestFile {
      fileFullPosted = true
      post(.kiosk(.movieFileFull(at: now())))
    }
    if let failure = recorder.writeFailure {
      // The kiosk stops the recording at once: the file is kept up to its last whole fragment.
      post(.kiosk(.movieFailed(reason: "write failed: \(failure)", at: now())))
      if let fault = recorder.writeFault { post(.storageFailed(fault, .movie, failure)) }
    }
  }

  func paceFrame(_ frame: FrameInfo, previewShown: Int, previewLive: Bool) {
    guard pace.windowDue(at: frame.timestamp) else { return }
    let sample = RecordingPace.Sample(
      at: frame.timestamp, previewShown: previewShown, previewLive: previewLive,
      serviceCPU: .nanoseconds(processCPUNanoseconds()),
      movieCPU: isRecording ? .nanoseconds(CPUUse.threadsNanoseconds(named: MovieRecorder.threadName)) : .zero)
    if let change = pace.observe(sample) { log(change) }
  }

  /// Frames and the drops counted here, into the recorder (from the loop, or from the opener once it is done).
  private func hand(_ frames: [Waiting], to recorder: MovieRecorder) {
    for frame in frames {
      recorder.submit(frame.still, timestamp: frame.timestamp, sequence: frame.sequence, crop: frame.crop)
    }
    recorder.countDropped(droppedHere)
    droppedHere = 0
  }

  func stop(at time: Instant) {
    guard let opening = current else { return }
    current = nil
    pace.stop()
    let (frames, dropped, results, finishing) = (waiting, droppedHere, results, finishing)
    waiting = []
    droppedHere = 0
    finishing.enter()
    // Behind the opening, so a stop right after the start finds the recorder there (or its failure reported).
    opener.async {
      guard let recorder = opening.recorder.withLock({ $0 }) else {
        finishing.leave()
        return
      }
      for frame in frames {
        recorder.submit(frame.still, timestamp: frame.timestamp, sequence: frame.sequence, crop: frame.crop)
      }
      recorder.countDropped(dropped)
      recorder.stop(at: time.nanoseconds) { result in
        opening.stopSound()
        switch result {
        case .success(let summary):
          if let error = MovieSummary.report(result) { results.reportCardFailure(error, during: .record) }
          results.post(.movieSaved(summary))
        case .failure(let error):
          results.post(.movieFailed("\(error)"))
          results.reportCardFailure(error, during: .movie)
        }
        finishing.leave()
      }
    }
  }

  /// The roll's storage is back: what its loss left on it (a recording cut off by a pulled card, or one
  /// that could not be published on a card gone read-only) is published now, not at the next start. On the
  /// opener, behind any recording still being finished and before the next one opens.
  func storageReturned() {
    guard let roll else { return }
    let (results, finishing) = (results, finishing)
    opener.async {
      finishing.wait()
      roll.storageReturned()
      _ = RollRecovery.recordings(roll) { results.reportCardFailure($0, during: $1) }
      // Listed again even with nothing recovered: what is on the card now may not be what was listed (a
      // delete the card failed left its item there; another card may have been put in).
      results.post(.rollRecovered)
    }
  }

  /// Stopped by a signal: the movie being recorded is finished and published, and one stopped just before
  /// (still being finished on the recorder's threads) is published and recorded, before the service goes: its
  /// record is appended after the publish, so leaving at once could lose it.
  func finishAtExit() {
    opener.sync {}
    defer { finishing.wait() }
    guard let opening = current else { return }
    current = nil
    guard let recorder = opening.recorder.withLock({ $0 }) else { return }
    hand(waiting, to: recorder)
    waiting = []
    MovieSummary.report(recorder.stopAndWait())
    opening.stopSound()
  }

  /// The microphone's thread, from the opener: a device that does not open leaves the movie silent (logged
  /// once), never failed. Whether it opened, or went away while recording (pulled), is the `microphone`
  /// capability's news for the loop: "Off: sound" on the overlay while it is gone, and gone again from it when
  /// a later movie opens it.
  private static func listen(
    _ microphone: SoundFormat, into sound: MovieSound, _ opening: Opening, results: Mailbox<ServiceEvent>
  ) {
    do {
      let capture = try SoundCapture(
        device: microphone.device, deliver: { period in sound.take(period.samples, time: period.time) },
        ended: { error in
          sound.ended("\(error)")
          results.post(.capability(.fail(.microphone, "\(error)")))
        })
      opening.sound.withLock { $0 = capture }
      results.post(.capability(.pass(.microphone, "\(capture.format)")))
    } catch {
      sound.ended("\(error)")
      results.post(.capability(.fail(.microphone, "\(error)")))
    }
  }

  func saved(_ movie: MovieSummary) { saved += 1 }
  func failed() { failures += 1 }
}
