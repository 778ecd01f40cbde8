// `make bench`: frame to durable JPEG, stage by stage, beside cjpeg and ffmpeg's MJPEG encoder on the same
// frames at the same sizes, in the same run. Prints medians and ratios; it never passes or fails on time.
#if canImport(Glibc)
  import Glibc
#endif
import CameraRoll
import Dispatch
import Foundation
import Imaging
import JPEGCodec
import KioskCore
import Capture
import LinuxIO
import MediaFiles
import Synchronization

let quality = 90
let sizes = [(640, 480), (1280, 720), (1920, 1080)]
let formats: [PixelFormat] = [.yuyv, .nv12]
let workDirectory = NSTemporaryDirectory() + "kioskcam-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: workDirectory) }

/// The end of a partial run: `exit` skips the top-level `defer`, which would leave the work folder behind.
func finish() -> Never {
  try? FileManager.default.removeItem(atPath: workDirectory)
  exit(0)
}

func now() -> UInt64 {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// CPU time of this thread: the machine is shared, so compute stages are measured in CPU time, not wall time.
func threadCPU() -> UInt64 {
  var time = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
  return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// CPU time (user + system, all threads) of the child processes reaped so far: the peers' side of the same measure.
func childrenCPU() -> UInt64 {
  var usage = rusage()
  getrusage(RUSAGE_CHILDREN.rawValue, &usage)
  let user = UInt64(usage.ru_utime.tv_sec) * 1_000_000_000 + UInt64(usage.ru_utime.tv_usec) * 1000
  return user + UInt64(usage.ru_stime.tv_sec) * 1_000_000_000 + UInt64(usage.ru_stime.tv_usec) * 1000
}

/// Median of `clock`'s advance over `body`, in milliseconds, over `runs` runs (after one warm-up run).
func median(_ runs: Int, clock: () -> UInt64 = threadCPU, _ body: () throws -> Void) rethrows -> Double {
  try body()
  var times: [Double] = []
  for _ in 0..<runs {
    let start = clock()
    try body()
    times.append(Double(clock() - start) / 1_000_000)
  }
  return times.sorted()[runs / 2]
}

/// A textured frame, not flat bars: flat colour compresses unrealistically fast. Limited-range BT.601 like a
/// camera, deterministic so that every run and every peer sees the same pixels.
func syntheticFrame(_ format: PixelFormat, width: Int, height: Int) -> StillFrame {
  var seed: UInt32 = 12345
  func noise() -> Int {
    seed = seed &* 1_664_525 &+ 1_013_904_223
    return Int(seed >> 27) - 16
  }
  func luma(_ x: Int, _ y: Int) -> UInt8 {
    let wave = 60 * sin(Double(x) / 37) * cos(Double(y) / 23) + 30 * sin(Double(x + y) / 11)
    return UInt8(clamping: min(235, max(16, 126 + Int(wave) + noise())))
  }
  func chroma(_ value: Int) -> UInt8 { UInt8(clamping: min(240, max(16, value))) }
  switch format {
  case .nv12:
    var bytes = [UInt8](repeating: 0, count: width * height * 3 / 2)
    for y in 0..<height { for x in 0..<width { bytes[y * width + x] = luma(x, y) } }
    for row in 0..<(height / 2) {
      for pair in 0..<(width / 2) {
        bytes[width * height + row * width + pair * 2] = chroma(128 + (pair * 2 * 96) / width - 48 + noise() / 4)
        bytes[width * height + row * width + pair * 2 + 1] = chroma(128 + (row * 2 * 96) / height - 48 + noise() / 4)
      }
    }
    return StillFrame(format: .nv12, width: width, height: height, bytesPerLine: width, range: .limited, bytes: bytes)
  default:
    var bytes = [UInt8](repeating: 0, count: width * height * 2)
    for y in 0..<height {
      for pair in 0..<(width / 2) {
        let at = (y * width / 2 + pair) * 4
        bytes[at] = luma(pair * 2, y)
        bytes[at + 1] = chroma(128 + (pair * 2 * 96) / width - 48 + noise() / 4)
        bytes[at + 2] = luma(pair * 2 + 1, y)
        bytes[at + 3] = chroma(128 + (y * 96) / height - 48 + noise() / 4)
      }
    }
    return StillFrame(format: .yuyv, width: width, height: height, bytesPerLine: width * 2, range: .limited, bytes: bytes)
  }
}

/// The frame as 8-bit RGB PPM, what cjpeg reads (converted here, outside any timing).
func ppm(of frame: StillFrame) throws -> [UInt8] {
  let planes = try StillPipeline.planes(of: frame)
  var out = Array("P6\n\(frame.width) \(frame.height)\n255\n".utf8)
  out.reserveCapacity(out.count + frame.width * frame.height * 3)
  for y in 0..<frame.height {
    for x in 0..<frame.width {
      let yy = Double(planes.luma[y * frame.width + x])
      let chromaIndex = (y * planes.chromaHeight / frame.height) * planes.chromaWidth + x * planes.chromaWidth / frame.width
      let cb = Double(planes.cb[chromaIndex]) - 128
      let cr = Double(planes.cr[chromaIndex]) - 128
      for value in [yy + 1.402 * cr, yy - 0.344136 * cb - 0.714136 * cr, yy + 1.772 * cb] {
        out.append(UInt8(clamping: Int(value.rounded())))
      }
    }
  }
  return out
}

@discardableResult
func run(_ arguments: [String]) throws -> Int32 {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: arguments[0])
  process.arguments = Array(arguments.dropFirst())
  process.standardOutput = FileHandle.nullDevice
  process.standardError = FileHandle.nullDevice
  try process.run()
  process.waitUntilExit()
  return process.terminationStatus
}

func which(_ tool: String) -> String? {
  ["/usr/bin/\(tool)", "/usr/local/bin/\(tool)"].first { FileManager.default.isExecutableFile(atPath: $0) }
}

func format(_ value: Double) -> String { String(format: "%.2f", value) }

let metadata = ExifMetadata(
  make: "kioskcam", model: "bench", software: "kioskcam",
  captured: ExifDateTime(year: 2026, month: 1, day: 1, hour: 0, minute: 0, second: 0, millisecond: 0, utcOffsetMinutes: 0),
  orientation: .normal, pixelWidth: 0, pixelHeight: 0, uniqueID: String(repeating: "0", count: 32))

// `kioskcam-bench preview`: only the preview table and the board's peak memory; `review`: only review mode's;
// `zoom`: only the MJPEG zoom's; `stills`: only the stills'; `h264`, `audio`, `pipeline`, `pi`, `memory` (the
// board's peak for issue 39's mix): those alone.
let previewOnly = CommandLine.arguments.dropFirst().first == "preview"
let reviewOnly = CommandLine.arguments.dropFirst().first == "review"
let stillsOnly = CommandLine.arguments.dropFirst().first == "stills"
if CommandLine.arguments.dropFirst().first == "zoom" {
  try zoomBench()
  finish()
}
if CommandLine.arguments.dropFirst().first == "pi" {
  // The fraction of a core of this machine a Raspberry Pi 4 core is worth: docs/performance.md.
  try piBudgetBench(fraction: 0.27)
  finish()
}
if CommandLine.arguments.dropFirst().first == "h264" {
  try h264Bench()
  finish()
}
if CommandLine.arguments.dropFirst().first == "audio" {
  try audioBench()
  finish()
}
if CommandLine.arguments.dropFirst().first == "pipeline" {
  try pipelineBench()
  finish()
}
if reviewOnly {
  try reviewBench()
  finish()
}
if CommandLine.arguments.dropFirst().first == "memory" {
  print(try boardPeakRSSLines()?.joined(separator: "\n")
    ?? "kioskcam run peak memory: needs the virtual board (make board-start, then make bench BENCH=memory)")
  finish()
}
if !previewOnly {
print("kioskcam bench: frame to durable JPEG, quality \(quality), medians in ms: CPU time for copy to exif")
print("and for the peers (the machine may be shared), wall time for write and fsync (\(workDirectory))")
print("peers: cjpeg \(which("cjpeg") ?? "missing"), ffmpeg \(which("ffmpeg") ?? "missing")")
print("")
let cores = CPUUse.threads()
let bands = Config().display.previewWorkers(cores: cores)
print("format size        copy  planes  encode    exif   write   fsync |  total |  cjpeg  ffmpeg | ours/cjpeg ours/ffmpeg | \(bands) bands:  wall    cpu wall/cjpeg")

// cjpeg is one process per image: its start-up, measured on a 16x16 image, is subtracted.
var cjpegStartup = 0.0
if let cjpeg = which("cjpeg") {
  let tiny = "\(workDirectory)/tiny.ppm"
  try Data(try ppm(of: syntheticFrame(.yuyv, width: 16, height: 16))).write(to: URL(fileURLWithPath: tiny))
  cjpegStartup = try median(9, clock: childrenCPU) { try run([cjpeg, "-quality", "\(quality)", "-outfile", "/dev/null", tiny]) }
}

for (width, height) in sizes {
  for pixelFormat in formats {
    let frame = syntheticFrame(pixelFormat, width: width, height: height)
    let runs = width >= 1920 ? 9 : 15
    var ring = [UInt8]()
    let copy = median(runs) {
      ring.removeAll(keepingCapacity: true)
      ring.append(contentsOf: frame.bytes)
    }
    var planes: (any YCbCrPlanes)?
    let planesTime = try median(runs) { planes = try StillPipeline.planes(of: frame) }
    var jpeg: [UInt8] = []
    let encode = try median(runs) { jpeg = try JPEGEncoder.encode(planes!, quality: quality) }
    var file: [UInt8] = []
    var withSize = metadata
    withSize.pixelWidth = width
    withSize.pixelHeight = height
    let encoded = StillPipeline.Encoded(jpeg: jpeg, planes: planes!, width: width, height: height)
    let exif = try median(runs) { file = try StillPipeline.withExif(encoded, withSize) }

    // Write, then make durable as the roll does: fsync the file, rename, fsync the folder.
    let directory = try Directory(path: workDirectory)
    var counter = 0
    var writeTimes: [Double] = []
    var syncTimes: [Double] = []
    for _ in 0..<runs {
      counter += 1
      let start = now()
      let fd = try directory.createExclusive(".tmp-\(counter).JPG")
      try fd.writeAll(file)
      let written = now()
      try fd.sync()
      try fd.close()
      try directory.renameNoReplace(".tmp-\(counter).JPG", to: "IMG_\(counter).JPG")
      try directory.sync()
      let synced = now()
      writeTimes.append(Double(written - start) / 1_000_000)
      syncTimes.append(Double(synced - written) / 1_000_000)
      try directory.remove("IMG_\(counter).JPG")
    }
    let write = writeTimes.sorted()[runs / 2]
    let sync = syncTimes.sorted()[runs / 2]
    let total = copy + planesTime + encode + exif + write + sync

    // Peers encode the same frame at the same quality; compared with our planes + encode (their work).
    var cjpegTime: Double?
    if let cjpeg = which("cjpeg") {
      let input = "\(workDirectory)/frame.ppm"
      try Data(try ppm(of: frame)).write(to: URL(fileURLWithPath: input))
      let sampling = pixelFormat == .nv12 ? "2x2,1x1,1x1" : "2x1,1x1,1x1"
      let measured = try median(runs, clock: childrenCPU) {
        try run([cjpeg, "-quality", "\(quality)", "-sample", sampling, "-outfile", "/dev/null", input])
      }
      cjpegTime = max(0, measured - cjpegStartup)
    }
    var ffmpegTime: Double?
    if let ffmpeg = which("ffmpeg") {
      // One process encodes many copies of the frame; the per-frame cost is the slope, free of start-up.
      let input = "\(workDirectory)/frame.yuv"
      try Data(frame.bytes).write(to: URL(fileURLWithPath: input))
      let pixfmt = pixelFormat == .nv12 ? "nv12" : "yuyv422"
      let outfmt = pixelFormat == .nv12 ? "yuvj420p" : "yuvj422p"
      func ffmpegRun(_ frames: Int) throws {
        try run([
          ffmpeg, "-v", "error", "-y", "-stream_loop", "\(frames - 1)", "-f", "rawvideo", "-pix_fmt", pixfmt, "-s",
          "\(width)x\(height)", "-i", input, "-vf", "scale=out_range=full", "-pix_fmt", outfmt, "-c:v", "mjpeg",
          "-q:v", "2", "-f", "null", "-",
        ])
      }
      let many = 30
      let one = try median(5, clock: childrenCPU) { try ffmpegRun(1) }
      let lots = try median(5, clock: childrenCPU) { try ffmpegRun(many) }
      ffmpegTime = max(0, (lots - one) / Double(many - 1))
    }
    let ours = planesTime + encode
    // What the still writer does: planes and encode in bands, each on a core of its own, joined.
    let bandsWall = try median(runs, clock: now) { _ = try StillPipeline.encode(frame, quality: quality, bands: bands) }
    let bandsCPU = try median(runs, clock: { UInt64(processCPUNanoseconds()) }) { _ = try StillPipeline.encode(frame, quality: quality, bands: bands) }
    let cjpegText = cjpegTime.map(format) ?? "-"
    let ffmpegText = ffmpegTime.map(format) ?? "-"
    let cjpegRatio = cjpegTime.map { $0 > 0 ? format(ours / $0) : "-" } ?? "-"
    let ffmpegRatio = ffmpegTime.map { $0 > 0 ? format(ours / $0) : "-" } ?? "-"
    let label = "\(pixelFormat.fourcc) \(width)x\(height)".padding(toLength: 16, withPad: " ", startingAt: 0)
    let columns = [copy, planesTime, encode, exif, write, sync].map { format($0).leftPadded(7) }.joined(separator: " ")
    let bandsRatio = cjpegTime.map { $0 > 0 ? format(bandsWall / $0) : "-" } ?? "-"
    print("\(label) \(columns) | \(format(total).leftPadded(6)) | \(cjpegText.leftPadded(6)) \(ffmpegText.leftPadded(7)) | \(cjpegRatio.leftPadded(10)) \(ffmpegRatio.leftPadded(11)) | \(format(bandsWall).leftPadded(13)) \(format(bandsCPU).leftPadded(6)) \(bandsRatio.leftPadded(10))")
  }
}
print("")
print("ours = planes + encode (what the peers do: colour/range conversion and compression). cjpeg reads the same")
print("frame as RGB PPM (its start-up, \(format(cjpegStartup)) ms CPU on a 16x16 image, subtracted); ffmpeg reads the raw")
print("frame, one process for 30 copies, per-frame slope; -q:v 2 (its")
print("scale is not IJG quality: closest, not equal). Ratios below 1 mean ours is faster. bands: the still writer's")
print("path, planes and encode of each band on a core of its own and the bands joined at restart markers, in wall")
print("time and in the CPU time of all its threads; wall/cjpeg is the press-to-picture time against cjpeg's.")
}
if stillsOnly { finish() }

try previewBench()
try pipelineBench()
if !previewOnly { try reviewBench() }
print("")
if let lines = try boardPeakRSSLines() {
  print(lines.joined(separator: "\n"))
} else {
  print("kioskcam run peak memory: needs the virtual board (make board-start, then make bench)")
}


// Movies: sustained frames per second through the recorder the service uses (encoders on every core, one
// writer, fragments fsynced, finished and published), beside ffmpeg's MJPEG encoder writing a .mov of the
// same frames; wall time for both, in the same run, on the same cores.
print("")
print("movies: sustained encode-and-write, frames per second (wall time, \(CPUUse.threads()) cores), preset high (JPEG quality \(MovieQuality.high.jpegQuality))")
print("size        frames |   ours  ffmpeg | ours/ffmpeg | MJPEG passthrough")
for (width, height, frames) in [(1280, 720, 150), (1920, 1080, 100)] {
  let frame = syntheticFrame(.yuyv, width: width, height: height)
  func record(_ source: StillFrame) throws -> Double {
    let rollPath = "\(workDirectory)/roll-\(width)-\(source.format.fourcc)"
    try FileManager.default.createDirectory(atPath: rollPath, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: rollPath) }
    let roll = try CameraRoll(root: rollPath, suffix: "BENCH")
    let recorder = try MovieRecorder(
      roll: roll, width: width, height: height, frameRate: 25, preset: .high, sourceFormat: source.format.fourcc,
      passthrough: source.format == .mjpeg, tag: "bench")
    let start = now()
    for index in 0..<frames {
      // Wait rather than drop: this measures what the recorder sustains, not what it sheds.
      while recorder.pending >= recorder.queueBound { usleep(200) }
      recorder.submit(source, timestamp: Int64(index) * 40_000_000, sequence: UInt32(index))
    }
    let summary = try? recorder.stopAndWait().get()
    let seconds = Double(now() - start) / 1e9
    guard let summary, summary.frames == frames else { throw BenchFailure.lostFrames }
    return Double(frames) / seconds
  }
  let ours = try record(frame)
  let jpeg = try StillPipeline.encode(frame, quality: quality).jpeg
  let passthrough = try record(
    StillFrame(format: .mjpeg, width: width, height: height, bytesPerLine: 0, range: .full, bytes: jpeg))
  var ffmpegFPS: Double?
  if let ffmpeg = which("ffmpeg") {
    let input = "\(workDirectory)/movie.yuv"
    try Data(frame.bytes).write(to: URL(fileURLWithPath: input))
    let start = now()
    let status = try run([
      ffmpeg, "-v", "error", "-y", "-stream_loop", "\(frames - 1)", "-f", "rawvideo", "-pix_fmt", "yuyv422", "-s",
      "\(width)x\(height)", "-r", "25", "-i", input, "-vf", "scale=out_range=full", "-pix_fmt", "yuvj422p",
      "-c:v", "mjpeg", "-q:v", "2", "\(workDirectory)/ffmpeg.mov",
    ])
    if status == 0 { ffmpegFPS = Double(frames) / (Double(now() - start) / 1e9) }
  }
  let label = "\(width)x\(height)".padding(toLength: 11, withPad: " ", startingAt: 0)
  print(
    "\(label) \(String(frames).leftPadded(6)) | \(format(ours).leftPadded(6)) \(ffmpegFPS.map(format)?.leftPadded(7) ?? "      -") | \((ffmpegFPS.map { format(ours / $0) } ?? "-").leftPadded(11)) | \(format(passthrough).leftPadded(8)) fps")
}
print("ours: YUYV frames through MovieRecorder into a finished, published .MOV; ffmpeg: the same frame looped,")
print("yuyv422 to full-range 4:2:2 MJPEG at -q:v 2, into a .mov. Ratios above 1 mean ours is faster.")
if !previewOnly {
  try h264Bench()
  try audioBench()
}
if !previewOnly {
  print("")
  try zoomBench()
}

enum BenchFailure: Error { case lostFrames, noThumbnail }

extension String {
  func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
