#if canImport(Glibc)
  import Glibc
#endif
import CameraRoll
import KioskCore
import LinuxIO
import MediaFiles
import Synchronization
import VideoCodec

/// What the microphone gives: a recording's sound is encoded at its rate and channels.
public struct SoundInput: Sendable, Equatable {
  public var sampleRate: Int
  public var channels: Int
  public init(sampleRate: Int, channels: Int) {
    self.sampleRate = sampleRate
    self.channels = channels
  }
}

/// How a movie's sound was encoded, for the record and the log.
public struct AudioEncoding: Sendable, Equatable, CustomStringConvertible {
  public var codec = "aac"
  public var profile = "LC"
  public var sampleRate: Int
  public var channels: Int

  /// "AAC-LC 48000 Hz mono".
  public var description: String {
    "AAC-\(profile) \(sampleRate) Hz \(channels == 1 ? "mono" : channels == 2 ? "stereo" : "\(channels) channels")"
  }
}

/// A recording's sound: periods from the microphone's thread, lined up with the pictures (`AudioTimeline`)
/// there, encoded to AAC on a thread of its own (`kioskcam.sound-encode`), then taken by the writer into the
/// fragments.
///
/// The microphone's thread only lines periods up and queues them (microseconds under `state`): encoding on
/// it made the emulated board's capture overrun (AAC under TCG is slow), and every overrun loses sound. The
/// loop never takes the lock.
public final class MovieSound: Sendable {
  public let encoding: AudioEncoding
  let format: AudioTrackFormat

  private struct State {
    var timeline: AudioTimeline
    /// Frames lined up, not yet encoded.
    var pending: [Int16] = []
    var packets: [[UInt8]] = []
    /// Where the newest period ends, on CLOCK_MONOTONIC.
    var heardUntil: Int64 = .min
    /// The microphone failed, or the recording finished: nothing more comes.
    var closed = false
    var failure: String?
    var encodeQueued = false
  }

  /// The encoder, used on `worker` only.
  private final class Encoder: @unchecked Sendable {
    // Unchecked: every call is a job of the one worker thread.
    let aac: AACEncoder
    init(_ aac: AACEncoder) { self.aac = aac }
  }

  private let state: Mutex<State>
  private let encoder: Encoder
  private let worker = BackgroundWorker(name: "kioskcam.sound-encode")
  private let priming: Int64
  private let frameSamples: Int
  /// The most sound waiting for the encoder: a board whose encoder cannot keep up loses its sound (logged),
  /// not its memory or the sync of what was kept.
  private let backlogLimit: Int

  init(sampleRate: Int, channels: Int) throws(CodecError) {
    let aac = try AACEncoder(sampleRate: sampleRate, channels: channels)
    encoding = AudioEncoding(sampleRate: sampleRate, channels: channels)
    format = .aac(
      sampleRate: sampleRate, channels: channels, audioSpecificConfig: aac.audioSpecificConfig,
      bitRate: aac.bitRate, frameLength: aac.frameLength)
    // The decoder gives the encoder's priming first: the sound it is given starts that much after the first
    // picture, so that what is heard at a moment of the movie is what was captured at it.
    priming = Int64(aac.priming) * 1_000_000_000 / Int64(sampleRate)
    frameSamples = aac.frameLength * channels
    backlogLimit = 10 * sampleRate * channels
    encoder = Encoder(aac)
    state = Mutex(State(timeline: AudioTimeline(rate: sampleRate, channels: channels)))
  }

  deinit { worker.finish() }

  /// From the microphone's thread: one period, interleaved, its first frame captured at `time`.
  public func take(_ samples: [Int16], time: Int64) {
    let overflow = state.withLock { state -> Bool in
      guard !state.closed else { return false }
      state.heardUntil = time + Int64(samples.count / state.timeline.channels) * 1_000_000_000 / Int64(state.timeline.rate)
      state.pending += state.timeline.take(samples, time: time)
      return state.pending.count > backlogLimit
    }
    if overflow { ended("the AAC encoder is slower than the sound comes") }
    scheduleEncode()
  }

  /// From the microphone's thread: it failed (pulled); the movie goes on, silent from here.
  public func ended(_ reason: String) {
    let first = state.withLock { state -> Bool in
      guard !state.closed else { return false }
      state.closed = true
      state.failure = reason
      return true
    }
    if first { log("movie sound stopped: \(reason); the movie goes on without it") }
  }

  /// From the writer: the first picture is in the file, captured at `time`.
  func picturesStarted(at time: Int64) {
    state.withLock { state in state.pending += state.timeline.start(at: time + priming) }
    scheduleEncode()
  }

  /// From the writer: the packets encoded so far.
  func take() -> [[UInt8]] {
    state.withLock { state in
      defer { state.packets = [] }
      return state.packets
    }
  }

  /// From the writer at the stop: waits (a little, on the writer's thread) for the microphone to have
  /// delivered up to `end`, then closes, encodes what is waiting and empties the encoder.
  func finish(until end: Int64?) -> [[UInt8]] {
    if let end {
      // Its periods come a period or two after they were captured; a microphone that has stopped delivering
      // is not waited for longer than this.
      for _ in 0..<50 {
        let (heard, closed) = state.withLock { ($0.heardUntil, $0.closed) }
        if closed || heard >= end { break }
        usleep(10_000)
      }
    }
    let report = state.withLock { state in
      state.closed = true
      let rate = Int64(state.timeline.rate)
      // What the timeline had to put right: a lost period (an overrun) shows as silence put in.
      return "movie sound: \(state.timeline.handed * 1000 / rate) ms lined up, \(state.timeline.silenceFrames * 1000 / rate) ms "
        + "of silence put in, \(state.timeline.droppedFrames * 1000 / rate) ms dropped"
        + (state.failure.map { ", stopped: \($0)" } ?? "")
    }
    log(report)
    return worker.sync { [self] in
      encodeWaiting()
      // The last part of a frame is left out (under 21 ms at 48 kHz): the sound ends on the pictures anyway.
      let last = (try? encoder.aac.finish()) ?? []
      return state.withLock { state in
        state.pending = []
        defer { state.packets = [] }
        return state.packets + last
      }
    }
  }

  private func scheduleEncode() {
    let queue = state.withLock { state -> Bool in
      guard !state.encodeQueued, state.pending.count >= frameSamples else { return false }
      state.encodeQueued = true
      return true
    }
    if queue { worker.async { [self] in encodeWaiting() } }
  }

  /// On the worker: every whole AAC frame waiting, encoded outside the lock.
  private func encodeWaiting() {
    while true {
      let frames: [Int16]? = state.withLock { state in
        let whole = state.pending.count / frameSamples * frameSamples
        guard whole > 0 else {
          state.encodeQueued = false
          return nil
        }
        defer { state.pending.removeFirst(whole) }
        return Array(state.pending[0..<whole])
      }
      guard let frames else { return }
      var packets: [[UInt8]] = []
      var failure: String?
      var at = 0
      while at < frames.count {
        do {
          packets += try encoder.aac.encode(frames[at..<at + frameSamples])
        } catch {
          failure = "\(error)"
          break
        }
        at += frameSamples
      }
      state.withLock { $0.packets += packets }
      if let failure { ended(failure) }
    }
  }
}
