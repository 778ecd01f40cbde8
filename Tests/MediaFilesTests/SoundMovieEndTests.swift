import CameraRoll
import Foundation
import Synchronization
import Testing

@testable import Capture
@testable import MediaFiles

extension SoundMovieTests {
  /// A microphone's periods as they come on a board: the sound after the stop arrives only while the
  /// recording is being finished, from a thread of its own.
  final class LateMicrophone: Sendable {
    let sound: MovieSound
    let heard = Mutex(0)
    init(_ sound: MovieSound) { self.sound = sound }

    func hear(until time: Int64) {
      while true {
        let index = heard.withLock { $0 }
        let first = SoundMovieTests.start + Int64(index) * Int64(SoundMovieTests.period) * 1_000_000_000 / Int64(SoundMovieTests.rate)
        let next = first + Int64(SoundMovieTests.period) * 1_000_000_000 / Int64(SoundMovieTests.rate)
        guard next <= time else { return }
        let samples = (0..<SoundMovieTests.period).map { frame -> Int16 in
          let t = Double(first - SoundMovieTests.start) / 1e9 + Double(frame) / Double(SoundMovieTests.rate)
          return Int16((SoundMovieTests.tone(t) * 32767).rounded())
        }
        sound.take(samples, time: first)
        heard.withLock { $0 += 1 }
      }
    }
  }

  /// A stop 5 ms after the last picture at 10 fps: the picture still lasts its frame (100 ms, the movie's
  /// grid), and the sound is waited for to the end of it, not only to the stop, though what follows the stop
  /// comes 100 ms late. On the board the sound of a movie stopped so ended 65 ms before its pictures.
  @Test func theSoundIsWaitedForToTheEndOfTheLastPictureNotOnlyToTheStop() throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("kioskcam-sound-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let roll = try CameraRoll(root: root, suffix: "TESTS")
    let recording = try roll.createRecording(tag: "late", extension: "MP4")
    let recorder = try MovieRecorder(
      roll: roll, recording: recording, output: recording, width: H264MovieTests.width, height: H264MovieTests.height,
      frameRate: 10, preset: .high, sourceFormat: "YUYV", passthrough: false, codec: .h264,
      sound: SoundInput(sampleRate: Self.rate, channels: 1), tag: "late")
    let microphone = LateMicrophone(try #require(recorder.sound))
    let (count, interval): (Int, Int64) = (20, 100_000_000)
    for index in 0..<count {
      let time = Self.start + Int64(index) * interval
      microphone.hear(until: time)
      recorder.submit(H264MovieTests.yuyvFrame(index), timestamp: time, sequence: UInt32(index))
      while recorder.pending > 0 { usleep(500) }
    }
    let stop = Self.start + Int64(count - 1) * interval + 5_000_000
    // Heard past the stop by up to a period when the recording stops, the rest later.
    microphone.hear(until: stop + 22_000_000)
    Thread.detachNewThread {
      usleep(100_000)
      microphone.hear(until: stop + 300_000_000)
    }
    let summary = try recorder.stopAndWait(at: stop).get()
    let info = try H264MovieTests.probe("\(root)/\(summary.item.relativePath)")
    let streams = try #require(info["streams"] as? [[String: Any]])
    let seconds = { (type: String) in streams.first { $0["codec_type"] as? String == type }.flatMap { Double($0["duration"] as? String ?? "") } }
    let (video, audio) = (try #require(seconds("video")), try #require(seconds("audio")))
    // One AAC frame (21.3 ms at 48 kHz) is what the encoder's last partial frame may leave out.
    #expect(abs(audio - video) <= 0.022, "sound \(audio) s, pictures \(video) s")
  }
}
