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
/// and encoded to AAC there, then taken by the writer into the fragments.
///
/// One lock, `state`, taken by the microphone's thread for a period (an AAC frame's encode, well under a
/// millisecond) and by the writer to take the packets; the loop never takes it.
public final class MovieSound: Sendable {
  public let encoding: AudioEncoding
  let format: AudioTrackFormat

  private struct State {
    var encoder: AACEncoder
    var timeline: AudioTimeline
    /// Frames lined up but not yet a whole AAC frame.
    var pending: [Int16] = []
    var packets: [[UInt8]] = []
    /// Where the newest period ends, on CLOCK_MONOTONIC.
    var heardUntil: Int64 = .min
    /// The microphone failed, or the recording finished: nothing more comes.
    var closed = false
    var failure: String?
  }

  private let state: Mutex<State>
  private let priming: Int64

  init(sampleRate: Int, channels: Int) throws(CodecError) {
    let encoder = try AACEncoder(sampleRate: sampleRate, channels: channels)
    encoding = AudioEncoding(sampleRate: sampleRate, channels: channels)
    format = .aac(
      sampleRate: sampleRate, channels: channels, audioSpecificConfig: encoder.audioSpecificConfig,
      bitRate: encoder.bitRate, frameLength: encoder.frameLength)
    // The decoder gives the encoder's priming first: the sound it is given starts that much after the first
    // picture, so that what is heard at a moment of the movie is what was captured at it.
    priming = Int64(encoder.priming) * 1_000_000_000 / Int64(sampleRate)
    state = Mutex(State(encoder: encoder, timeline: AudioTimeline(rate: sampleRate, channels: channels)))
  }

  /// From the microphone's thread: one period, interleaved, its first frame captured at `time`.
  public func take(_ samples: [Int16], time: Int64) {
    state.withLock { state in
      guard !state.closed else { return }
      state.heardUntil = time + Int64(samples.count / state.timeline.channels) * 1_000_000_000 / Int64(state.timeline.rate)
      Self.encode(state.timeline.take(samples, time: time), &state)
    }
  }

  /// From the microphone's thread: it failed (pulled); the movie goes on, silent from here.
  public func ended(_ reason: String) {
    state.withLock { state in
      guard !state.closed else { return }
      state.closed = true
      state.failure = reason
    }
    log("movie sound stopped: \(reason); the movie goes on without it")
  }

  /// From the writer: the first picture is in the file, captured at `time`.
  func picturesStarted(at time: Int64) {
    state.withLock { state in Self.encode(state.timeline.start(at: time + priming), &state) }
  }

  /// From the writer: the packets encoded so far.
  func take() -> [[UInt8]] {
    state.withLock { state in
      defer { state.packets = [] }
      return state.packets
    }
  }

  /// From the writer at the stop: waits (a little, on the writer's thread) for the microphone to have
  /// delivered up to `end`, then closes and empties the encoder.
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
    return state.withLock { state in
      // What the timeline had to put right: a lost period (an overrun) shows as silence put in.
      let rate = Int64(state.timeline.rate)
      log(
        "movie sound: \(state.timeline.handed * 1000 / rate) ms lined up, \(state.timeline.silenceFrames * 1000 / rate) ms of "
          + "silence put in, \(state.timeline.droppedFrames * 1000 / rate) ms dropped\(state.failure.map { ", stopped: \($0)" } ?? "")")
      state.closed = true
      // The last part of a frame is left out (under 21 ms at 48 kHz): the sound ends on the pictures anyway.
      state.pending = []
      state.packets += (try? state.encoder.finish()) ?? []
      defer { state.packets = [] }
      return state.packets
    }
  }

  private static func encode(_ frames: [Int16], _ state: inout State) {
    guard !frames.isEmpty else { return }
    state.pending += frames
    let length = state.encoder.frameLength * state.timeline.channels
    var at = 0
    while state.pending.count - at >= length {
      do {
        state.packets += try state.encoder.encode(state.pending[at..<at + length])
      } catch {
        state.closed = true
        state.failure = "\(error)"
        log("movie sound stopped: \(error); the movie goes on without it")
        break
      }
      at += length
    }
    state.pending.removeFirst(at)
  }
}
