#if canImport(Glibc)
  import Glibc
#endif
import Foundation
import VideoCodec

/// A movie's sound: a minute of 48 kHz sound (tones that come and go over noise, roughly a room) through the
/// service's AAC-LC encoder (libavcodec's aac, its fast coder, 64 kbit/s a channel), beside `ffmpeg -c:a aac`
/// with the same coder and bit rate from the same samples, CPU time of both in the same run: what a second of
/// sound costs a core, the figure that says whether a board keeps up.
func audioBench() throws {
  print("")
  print("movie sound: 60 s at 48 kHz through AAC-LC (libavcodec's aac, fast coder, 64 kbit/s a channel), CPU time")
  print("channels |   ours  ffmpeg | ours/ffmpeg | ours: CPU s per s of sound")
  let seconds = 60
  let rate = 48_000
  for channels in [1, 2] {
    let samples = roomSound(frames: seconds * rate, channels: channels)
    var bytes = 0
    var bitRate = 0
    // Medians of three: one minute each, on a machine that may be shared.
    let ours = try median(3) {
      let encoder = try AACEncoder(sampleRate: rate, channels: channels)
      let frame = encoder.frameLength * channels
      (bytes, bitRate) = (0, encoder.bitRate)
      var at = 0
      while at + frame <= samples.count {
        bytes += try encoder.encode(samples[at..<at + frame]).reduce(0) { $0 + $1.count }
        at += frame
      }
      bytes += try encoder.finish().reduce(0) { $0 + $1.count }
    } / 1000
    var peer: Double?
    if let ffmpeg = which("ffmpeg") {
      let input = "\(workDirectory)/sound-\(channels).raw"
      try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: input)) }
      peer = try median(3, clock: childrenCPU) {
        try run([
          ffmpeg, "-v", "error", "-y", "-f", "s16le", "-ar", "\(rate)", "-ac", "\(channels)", "-i", input, "-c:a", "aac",
          "-aac_coder", "fast", "-b:a", "\(bitRate)", "-f", "mp4", "\(workDirectory)/sound-\(channels).m4a",
        ])
      } / 1000
    }
    print(
      "\(String(channels).leftPadded(8)) | \(format(ours).leftPadded(6)) \((peer.map(format) ?? "-").leftPadded(7)) | "
        + "\((peer.map { format(ours / $0) } ?? "-").leftPadded(11)) | \(String(format: "%.4f", ours / Double(seconds)).leftPadded(26))"
        + "  (\(bytes / 1024) KiB)")
  }
  print("ours and ffmpeg: CPU seconds for the whole minute (ffmpeg's includes its start-up and the MP4 it writes);")
  print("at or below 1 means ours is as fast.")
}

/// `frames` frames of `channels`-channel sound: three tones fading in and out at their own paces over quiet
/// noise, deterministic, so that every run and the peer code the same samples.
private func roomSound(frames: Int, channels: Int) -> [Int16] {
  var seed: UInt32 = 4242
  var out = [Int16](repeating: 0, count: frames * channels)
  for index in 0..<frames {
    let t = Double(index) / 48_000
    seed = seed &* 1_664_525 &+ 1_013_904_223
    let noise = Double(Int32(bitPattern: seed) >> 20) / 2048 * 600
    let tones = 4000 * sin(2 * .pi * 220 * t) * (0.5 + 0.5 * sin(t * 1.3))
      + 2500 * sin(2 * .pi * 1375 * t) * (0.5 + 0.5 * sin(t * 0.7 + 1))
      + 1500 * sin(2 * .pi * 3100 * t) * max(0, sin(t * 2.9))
    for channel in 0..<channels {
      out[index * channels + channel] = Int16(clamping: Int((tones * (channel == 0 ? 1 : 0.8) + noise).rounded()))
    }
  }
  return out
}
