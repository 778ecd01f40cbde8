#if canImport(Glibc)
  import Glibc
#endif
import Dispatch
import Foundation
import Imaging
import JPEGCodec
import KioskCore
import LinuxIO
import Preview
import Synchronization
import Capture

/// The preview as the service now runs it: frames handed by one "loop" thread to the preview's workers,
/// which decode, scale and draw into lent canvases. Three figures per format and size, in the same run as
/// ffmpeg decoding and scaling the same frames with one thread and with two:
/// - frames per second with the workers kept busy (wall time: this is about using more than one core);
/// - the loop thread's CPU per frame (CLOCK_THREAD_CPUTIME_ID): the copy into the ring, the hand-over, and
///   handling what comes back, which is all the loop does now;
/// - latency from hand-over to the picture drawn, at a camera's 30 fps (no vblank here: the display adds
///   up to one refresh on top).
@MainActor func pipelineBench() throws {
  let cores = CPUUse.threads()
  let workers = Config().display.previewWorkers(cores: cores)
  print("")
  print("preview off the loop: \(workers) workers on \(cores) cores; fps = frames drawn a second (wall time, workers")
  print("kept busy); ffmpeg decoding and scaling the same frames, wall time, -threads 1 and -threads 2; loop CPU per")
  print("frame in ms (median, p99); latency hand-over to drawn at 30 fps in ms (median, p99); cores = the process's")
  print("CPU time over wall time while the workers are kept busy (\(workers) would be every worker always drawing)")
  print("input            output    |    fps cores  ff-1t  ff-2t | /ff-1t /ff-2t | loop-med loop-p99 | lat-med lat-p99")
  for (width, height) in [(1280, 720), (1920, 1080)] {
    for pixelFormat in [PixelFormat.mjpeg, .yuyv, .nv12] {
      let raw = syntheticFrame(pixelFormat == .nv12 ? .nv12 : .yuyv, width: width, height: height)
      let bytes = pixelFormat == .mjpeg ? try JPEGEncoder.encode(try StillPipeline.planes(of: raw), quality: 80) : raw.bytes
      for (outWidth, outHeight) in [(1280, 800), (1920, 1080)] {
        let target = PixelRect.aspectFit(sourceWidth: width, sourceHeight: height, into: outWidth, outHeight)
        let fit = PreviewFit(sourceWidth: width, sourceHeight: height, crop: nil, target: target, orientation: .init())
        let picture: PreviewJob.Picture =
          switch pixelFormat {
          case .mjpeg: .mjpeg(bytes, zoom: Zoom(maximum: 100, step: 100))
          case .nv12: .nv12(bytes, stride: raw.bytesPerLine)
          case .yuyv: .yuyv(bytes, stride: raw.bytesPerLine)
          }
        let bench = PipelineRun(workers: workers, width: outWidth, height: outHeight, frame: bytes, picture: picture, fit: fit)
        let (cpuBefore, wallBefore) = (processCPUNanoseconds(), monotonicNanoseconds())
        let fps = bench.throughput(frames: 300)
        let cores = Double(processCPUNanoseconds() - cpuBefore) / Double(monotonicNanoseconds() - wallBefore)
        let paced = bench.paced(frames: 90, interval: 1.0 / 30)
        bench.stop()
        let (one, two) = try pixelFormat == .mjpeg
          ? (ffmpegFPS(bytes, pixelFormat, width, height, target, threads: 1), ffmpegFPS(bytes, pixelFormat, width, height, target, threads: 2))
          : (nil, nil)
        func ratio(_ peer: Double?) -> String { peer.map { format(fps / $0) } ?? "-" }
        let label = "\(pixelFormat.fourcc) \(width)x\(height)".padding(toLength: 16, withPad: " ", startingAt: 0)
        let outLabel = "\(outWidth)x\(outHeight)".padding(toLength: 9, withPad: " ", startingAt: 0)
        let rates = [fps, one, two].map { ($0.map { String(format: "%.1f", $0) } ?? "-").leftPadded(6) }
        // Near the feed's own rate the camera, not the workers, is the limit: marked, never read as a ratio.
        let capped = fps > 0.8 / PipelineRun.feedInterval ? "*" : " "
        let ratesAndCores = "\(rates[0])\(capped)\(String(format: "%.2f", cores).leftPadded(5)) \(rates[1]) \(rates[2])"
        print(
          "\(label) \(outLabel) | \(ratesAndCores) | \(ratio(one).leftPadded(6)) \(ratio(two).leftPadded(6)) | \(format(paced.loopMedian).leftPadded(8)) \(format(paced.loopP99).leftPadded(8)) | \(format(paced.latencyMedian).leftPadded(7)) \(format(paced.latencyP99).leftPadded(7))")
      }
    }
  }
  print("fps: a camera sending \(Int(1 / PipelineRun.feedInterval)) frames a second, the newest winning; * = bound by that camera, not")
  print("by the workers (YUYV and NV12 need no decode).")
  print("ours: PreviewPipeline as the service runs it (one TurboJPEG decoder and libyuv scalers per worker, newest")
  print("frame wins); the loop's share includes copying the camera's frame into the ring, as the camera session does.")
}

/// One format and size through the pipeline, driven from this thread as the loop drives it.
final class PipelineRun {
  struct Paced {
    let loopMedian: Double
    let loopP99: Double
    let latencyMedian: Double
    let latencyP99: Double
    /// Frames handed over and drawn, and the latency median of the first and of the last third of the run:
    /// a backlog would show as the last third's latency growing past the first's.
    let drawn: Int
    let handed: Int
    let firstThirdMedian: Double
    let lastThirdMedian: Double
  }

  private let pipeline: PreviewPipeline
  private let canvases: MemoryCanvases
  /// What the workers reported, and a wake-up for each report.
  private final class Inbox: Sendable {
    let outcomes = Mutex<[PreviewPipeline.Outcome]>([])
    let arrived = DispatchSemaphore(value: 0)
  }
  private let inbox = Inbox()
  private let frame: [UInt8]
  private let picture: PreviewJob.Picture
  private let fit: PreviewFit
  private var ring: [UInt8] = []
  private var order = 0

  init(workers: Int, width: Int, height: Int, frame: [UInt8], picture: PreviewJob.Picture, fit: PreviewFit) {
    canvases = MemoryCanvases(count: workers + 3, width: width, height: height)
    self.frame = frame
    self.picture = picture
    self.fit = fit
    let inbox = inbox
    pipeline = PreviewPipeline(workers: workers) { outcome in
      inbox.outcomes.withLock { $0.append(outcome) }
      inbox.arrived.signal()
    }
  }

  func stop() { pipeline.stop() }

  /// What the loop does for one camera frame: copy it into the ring, hand it over. Returns false if the
  /// frame replaced one still waiting.
  private func handOver() -> Bool {
    ring.removeAll(keepingCapacity: true)
    ring.append(contentsOf: frame)
    order += 1
    let job = PreviewJob(
      tag: PreviewTag(order: order, generation: 0, frameNanoseconds: monotonicNanoseconds()), picture: picture, fit: fit
    ) { _ in }
    let canvases = canvases
    return pipeline.submit(job, lend: { canvases.lend() }) == nil
  }

  /// What came back, each canvas given back as a flip would: the tags of what was drawn, and how many
  /// outcomes there were in all (drawn, or not: a job's every outcome ends it).
  private func takeOutcomes() -> (drawn: [PreviewTag], all: Int) {
    let outcomes = inbox.outcomes.withLock { pending in
      defer { pending.removeAll(keepingCapacity: true) }
      return pending
    }
    let drawn = outcomes.compactMap { outcome -> PreviewTag? in
      guard case .drawn(let tag, let canvas) = outcome else { return nil }
      canvas.giveBack()
      return tag
    }
    return (drawn, outcomes.count)
  }

  private func takeResults() -> [PreviewTag] { takeOutcomes().drawn }

  /// Frames drawn a second with every worker kept busy: a camera far faster than the workers (a frame every
  /// `interval`), the newest frame winning as in the service. Fed only as outcomes came back instead, 80-147
  /// of 300 frames were replaced before a worker took them and the process used 1.3-1.8 of 2 cores: the
  /// loop thread, woken by a finished picture, wins the core from the niced worker that just finished.
  static let feedInterval = 0.001

  func throughput(frames: Int, interval: Double = feedInterval) -> Double {
    _ = takeOutcomes()
    var (drawn, ended) = (0, 0)
    let start = monotonicNanoseconds()
    var due = start
    while drawn < frames && ended < 3 * frames {
      let now = monotonicNanoseconds()
      if now >= due {
        _ = handOver()
        due = now + Int64(interval * 1e9)
      }
      _ = inbox.arrived.wait(timeout: .now() + .nanoseconds(Int(max(0, due - monotonicNanoseconds()))))
      let taken = takeOutcomes()
      (drawn, ended) = (drawn + taken.drawn.count, ended + taken.all)
    }
    return Double(drawn) / (Double(monotonicNanoseconds() - start) / 1e9)
  }

  /// Frames handed over at a camera's rate: the loop's CPU for each, and each one's latency to drawn.
  func paced(frames: Int, interval: Double) -> Paced {
    _ = takeResults()
    // Each frame is charged its hand-over and the handling of what came back since the one before, as the
    // service's LoopCPU does.
    var perFrame = LatencyWindow(capacity: frames)
    var latency = LatencyWindow(capacity: frames)
    var carried: Int64 = 0
    var (first, last) = (LatencyWindow(capacity: frames), LatencyWindow(capacity: frames))
    var drawn = 0
    let start = monotonicNanoseconds()
    for index in 0..<frames {
      let due = start + Int64(Double(index) * interval * 1e9)
      while monotonicNanoseconds() < due {
        _ = inbox.arrived.wait(timeout: .now() + .nanoseconds(Int(max(0, due - monotonicNanoseconds()))))
        let cpu = threadCPUNanoseconds()
        for tag in takeResults() {
          let took = monotonicNanoseconds() - tag.frameNanoseconds!
          latency.add(took)
          drawn += 1
          if index < frames / 3 { first.add(took) } else if index >= frames * 2 / 3 { last.add(took) }
        }
        carried += threadCPUNanoseconds() - cpu
      }
      let cpu = threadCPUNanoseconds()
      _ = handOver()
      perFrame.add(threadCPUNanoseconds() - cpu + carried)
      carried = 0
    }
    func ms(_ value: Int64?) -> Double { Double(value ?? 0) / 1e6 }
    return Paced(
      loopMedian: ms(perFrame.percentile(0.5)), loopP99: ms(perFrame.percentile(0.99)),
      latencyMedian: ms(latency.percentile(0.5)), latencyP99: ms(latency.percentile(0.99)), drawn: drawn,
      handed: frames, firstThirdMedian: ms(first.percentile(0.5)), lastThirdMedian: ms(last.percentile(0.5)))
  }
}

/// ffmpeg decoding (and scaling) the same MJPEG frame, frames a second by wall time, as the slope between
/// 1 and 60 frames so its start-up does not count.
@MainActor func ffmpegFPS(
  _ bytes: [UInt8], _ format: PixelFormat, _ width: Int, _ height: Int, _ target: PixelRect, threads: Int
) throws -> Double? {
  guard let ffmpeg = which("ffmpeg") else { return nil }
  let input = "\(workDirectory)/pipeline.mjpeg"
  try Data(bytes).write(to: URL(fileURLWithPath: input))
  func ffmpegRun(_ frames: Int) throws {
    try run(
      [ffmpeg, "-v", "error", "-y", "-filter_threads", "\(threads)", "-threads", "\(threads)", "-stream_loop", "\(frames - 1)",
        "-f", "mjpeg", "-i", input, "-threads", "\(threads)", "-vf", "scale=\(target.width):\(target.height):flags=neighbor",
        "-pix_fmt", "bgra", "-f", "null", "-"])
  }
  let frames = 60
  let one = try median(5, clock: wallNanoseconds) { try ffmpegRun(1) }
  let many = try median(5, clock: wallNanoseconds) { try ffmpegRun(frames) }
  return Double(frames - 1) / max(1e-9, (many - one) / 1000)
}

func wallNanoseconds() -> UInt64 { UInt64(monotonicNanoseconds()) }

/// `kioskcam-bench pi`: the 1280x720 MJPEG preview at a camera's 30 fps inside a CPU quota that stands for a
/// Raspberry Pi 4's cores (`fraction` of each core of this machine; docs/performance.md says why that fraction).
/// The quota is CFS bandwidth control: cgroup v2's cpu.max where the cpu controller is on v2, else v1's
/// cpu.cfs_quota_us, the same mechanism.
@MainActor func piBudgetBench(fraction: Double) throws {
  let cores = CPUUse.threads()
  let where_ = try CPUQuota.enter(fraction: fraction, cores: cores)
  let workers = Config().display.previewWorkers(cores: cores)
  print("")
  print("Pi-class budget: \(Int(fraction * 100))% of each of \(cores) cores (\(where_)), \(workers) workers, 1280x720 MJPEG")
  print("to 1280x800 at 30 fps for 10 s")
  let raw = syntheticFrame(.yuyv, width: 1280, height: 720)
  let jpeg = try JPEGEncoder.encode(try StillPipeline.planes(of: raw), quality: 80)
  let target = PixelRect.aspectFit(sourceWidth: 1280, sourceHeight: 720, into: 1280, 800)
  let fit = PreviewFit(sourceWidth: 1280, sourceHeight: 720, crop: nil, target: target, orientation: .init())
  let bench = PipelineRun(
    workers: workers, width: 1280, height: 800, frame: jpeg, picture: .mjpeg(jpeg, zoom: Zoom(maximum: 100, step: 100)), fit: fit)
  let paced = bench.paced(frames: 300, interval: 1.0 / 30)
  bench.stop()
  CPUQuota.leave()
  print("drawn \(paced.drawn) of \(paced.handed) frames (\(String(format: "%.1f", Double(paced.drawn) / 10)) a second), skipped \(paced.handed - paced.drawn)")
  print("latency hand-over to drawn: median \(format(paced.latencyMedian)) ms, p99 \(format(paced.latencyP99)) ms; first third's median \(format(paced.firstThirdMedian)) ms, last third's \(format(paced.lastThirdMedian)) ms")
  print("loop CPU per frame: median \(format(paced.loopMedian)) ms, p99 \(format(paced.loopP99)) ms")
}

/// Moves this process into a cgroup of its own with a CFS quota of `fraction` of each core.
enum CPUQuota {
  struct Failure: Error, CustomStringConvertible { let description: String }

  /// The group entered, and the one this process was in before (moved back to at `leave`).
  nonisolated(unsafe) private static var entered: (group: String, parent: String)?

  static func leave() {
    guard let (group, parent) = entered else { return }
    try? write("\(getpid())", to: "\(parent)/cgroup.procs")
    // Empty once every thread has moved back out; a worker still ending keeps it, which rmdir then says.
    if rmdir(group) != 0 { print("cgroup \(group) left behind: \(String(cString: strerror(errno)))") }
    entered = nil
  }

  static func enter(fraction: Double, cores: Int) throws -> String {
    let period = 100_000
    let quota = Int(Double(period) * fraction * Double(cores))
    let pid = "\(getpid())"
    let v2 = "/sys/fs/cgroup"
    if let controllers = try? String(contentsOfFile: "\(v2)/cgroup.controllers", encoding: .utf8),
      controllers.split(separator: " ").contains(where: { $0.trimmingCharacters(in: .whitespacesAndNewlines) == "cpu" })
    {
      let group = "\(v2)/kioskcam-bench-\(pid)"
      try make(group)
      try write("\(quota) \(period)", to: "\(group)/cpu.max")
      try write(pid, to: "\(group)/cgroup.procs")
      entered = (group, v2)
      return "cgroup v2 cpu.max \(quota) \(period)"
    }
    let v1 = "/sys/fs/cgroup/cpu"
    guard FileManager.default.fileExists(atPath: "\(v1)/cpu.cfs_quota_us") else {
      throw Failure(description: "no cgroup cpu controller: \(v2)/cgroup.controllers has no cpu and \(v1) is not mounted")
    }
    let group = "\(v1)/kioskcam-bench-\(pid)"
    try make(group)
    try write("\(period)", to: "\(group)/cpu.cfs_period_us")
    try write("\(quota)", to: "\(group)/cpu.cfs_quota_us")
    // Threads, not only the process: v1 moves one task per write to `tasks`; cgroup.procs moves them all.
    try write(pid, to: "\(group)/cgroup.procs")
    entered = (group, v1)
    let controllers = (try? String(contentsOfFile: "\(v2)/unified/cgroup.controllers", encoding: .utf8)) ?? ""
    return "cgroup v1 cpu.cfs_quota_us \(quota) per \(period) us: the cpu controller is not on v2 here (unified has: \(controllers.trimmingCharacters(in: .whitespacesAndNewlines)))"
  }

  private static func make(_ path: String) throws {
    guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
      throw Failure(description: "mkdir \(path): \(String(cString: strerror(errno)))")
    }
  }

  private static func write(_ text: String, to path: String) throws {
    do {
      try text.write(toFile: path, atomically: false, encoding: .utf8)
    } catch {
      throw Failure(description: "\(path): \(error)")
    }
  }
}
