import Foundation
import Synchronization
import Testing

/// Review's work is the workers', never the loop's (issue 39): a 4000x3000 photo decoded and an H.264 movie
/// played while the control socket is asked for `status` without a pause, each answer timed in the guest.
/// Judged against the camera's own frame interval in the same run (its frames counted over the run), not a
/// fixed time: nine answers in ten come within one frame interval, and none waits for a decode.
extension BoardDeviceTests {
  /// Asks `status --json` one request after another on a thread of its own, until stopped.
  final class StatusSampler: Sendable {
    struct Sample {
      let at: Date
      let seconds: Double
      let framesReceived: Int
      let loopCPUP99: Double?
    }
    private let samples = Mutex<[Sample]>([])
    private let failures = Mutex<[String]>([])
    private let running = Atomic<Bool>(true)
    private let done = DispatchSemaphore(value: 0)

    init() {
      Thread.detachNewThread { [self] in
        while running.load(ordering: .relaxed) {
          do {
            let (status, seconds) = try Board.timedStatus()
            let (frames, p99) = (status["framesReceived"] as? Int ?? -1, status["loopCPUPerFrameP99Milliseconds"] as? Double)
            samples.withLock { $0.append(Sample(at: Date(), seconds: seconds, framesReceived: frames, loopCPUP99: p99)) }
          } catch {
            failures.withLock { $0.append("\(error)") }
          }
        }
        done.signal()
      }
    }

    func stop() -> (samples: [Sample], failures: [String]) {
      running.store(false, ordering: .relaxed)
      done.wait()
      return (samples.withLock { $0 }, failures.withLock { $0 })
    }
  }

  /// IMG_0001 a green 4000x3000 photo; IMG_0002 an H.264 MP4 at 1280x720 and 30 fps, yellow for 1 s, then
  /// magenta for 14 s (ffmpeg's libx264): long enough for screendumps to see it while the status requests load
  /// the board, and for a player that falls behind the clock to show it. A player that chased the due frame
  /// through every frame before it (and turned each into XRGB) fell further behind with each request under
  /// that load: yellow for all of this movie's 15 s, and seen only at the last moment of a 10 s one.
  func makeLoopRoll(_ roll: String) throws {
    let folder = "\(roll)/DCIM/100KIOSK"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    try ffmpeg([
      "-f", "lavfi", "-i", "color=c=0x00FF00:s=4000x3000", "-frames:v", "1", "-pix_fmt", "yuvj420p", "-q:v", "2",
      "-f", "image2", "-c:v", "mjpeg", "\(folder)/IMG_0001.JPG",
    ])
    try ffmpeg([
      "-f", "lavfi", "-i", "color=c=0xFFFF00:s=1280x720:r=30:d=1", "-f", "lavfi", "-i",
      "color=c=0xFF00FF:s=1280x720:r=30:d=14", "-filter_complex", "[0][1]concat=n=2:v=1", "-pix_fmt", "yuv420p",
      "-c:v", "libx264", "-preset", "ultrafast", "-f", "mp4", "\(folder)/IMG_0002.MP4",
    ])
  }

  @Test func statusIsAnsweredWhileReviewDecodesAPhotoAndPlaysAnH264Movie() throws {
    let (config, roll) = try Board.makeConfig(name: "review-loop")
    try makeLoopRoll(roll)
    try Board.withService("review-loop", config: config) {
      // libavcodec is opened when review first decodes H.264, not at start (Sources/CAVCodec/shim.h): the
      // kernel's map of the process says which libraries it holds.
      func mapsLibavcodec() throws -> Bool {
        let maps = try Board.run("grep -c libavcodec /proc/\(Board.servicePID(config: config))/maps || true")
        return (Int(maps.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1) > 0
      }
      #expect(try !mapsLibavcodec(), "libavcodec mapped at start")
      // The floor: the same requests while the kiosk shows the live picture.
      let idle = StatusSampler()
      Thread.sleep(forTimeInterval: 3)
      let floor = idle.stop()
      try #require(floor.failures.isEmpty && floor.samples.count >= 5, "\(floor.failures)")

      let sampler = StatusSampler()
      try Board.click("mode")
      try expectShown("review-loop", "IMG_0002.MP4", "1 / 2", Self.yellow)
      try Board.click("shutter")
      let asked = Date()
      try expectShown("review-loop", "IMG_0001.JPG", "2 / 2", Self.green)
      let decoding = (from: asked, to: Date())
      try Board.click("shutter")
      try expectShown("review-loop", "IMG_0002.MP4", "1 / 2", Self.yellow)
      try Board.click("cancel")
      let playing = Date()
      try expectShown("review-loop", "IMG_0002.MP4", "1 / 2", Self.magenta, playing: true)
      try Board.waitFor("the end of the movie") {
        try lastScreen("review-loop") == "reviewing DCIM/100KIOSK/IMG_0002.MP4 1 / 2"
      }
      let played = (from: playing, to: Date())
      #expect(try mapsLibavcodec(), "libavcodec mapped once an H.264 movie played")
      let (samples, failures) = sampler.stop()
      #expect(failures.isEmpty, "\(failures)")

      func at(_ q: Double, _ seconds: [Double]) -> Double {
        let sorted = seconds.sorted()
        return sorted.isEmpty ? .infinity : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]
      }
      func figures(_ seconds: [Double]) -> String {
        guard let slowest = seconds.max() else { return "none" }
        return String(
          format: "%d answers, median %.1f ms, p90 %.1f ms, slowest %.1f ms", seconds.count, at(0.5, seconds) * 1000,
          at(0.9, seconds) * 1000, slowest * 1000)
      }
      let idleSeconds = floor.samples.map(\.seconds)
      let whileDecoding = samples.filter { $0.at > decoding.from && $0.at <= decoding.to }.map(\.seconds)
      let whilePlaying = samples.filter { $0.at > played.from && $0.at <= played.to }.map(\.seconds)
      let loopCPU = samples.last?.loopCPUP99.map { String(format: "%.2f ms", $0) } ?? "none"
      // The camera's frame interval as it delivered over the whole review: its frames counted by status.
      let (first, last) = (try #require(samples.first), try #require(samples.last))
      let frameInterval = last.at.timeIntervalSince(first.at) / Double(max(1, last.framesReceived - first.framesReceived))
      let photoSeconds = decoding.to.timeIntervalSince(decoding.from)
      print("status while live (idle): \(figures(idleSeconds))")
      print(String(format: "status while the 4000x3000 photo decoded (%.1f s to its full picture): ", photoSeconds) + figures(whileDecoding))
      print(String(format: "status while the H.264 movie played (%.1f s): ", played.to.timeIntervalSince(played.from)) + figures(whilePlaying))
      print(String(format: "the camera's frame interval, counted: %.1f ms; the loop's CPU per camera frame, p99: ", frameInterval * 1000) + loopCPU)
      #expect(whileDecoding.count >= 3 && whilePlaying.count >= 3, "the requests kept coming: \(whileDecoding.count), \(whilePlaying.count)")
      #expect(at(0.9, whileDecoding) < frameInterval && at(0.9, whilePlaying) < frameInterval, "nine answers in ten within a frame interval")
      // A loop that decoded would hold the request that came in with the decode for most of it.
      #expect((whileDecoding.max() ?? .infinity) < photoSeconds / 2, "no answer waited for the photo's decode")
    }
  }
}
