import CameraRoll
import Capture
import Foundation
import Imaging
import JPEGCodec
import KioskCore
import LinuxIO
import VideoCodec

/// H.264 movies: our recorder (frames converted on the encoders, libx264 on the writer thread, fragments
/// fsynced, finished and published) beside `ffmpeg -c:v libx264` with the same preset, threads, rate, bit rate
/// and frames, in the same run. From YUYV, and from MJPEG with the decode included on both sides. Also the
/// CPU a second of 30 fps movie takes (all threads of the process, the figure that says whether a Pi-class
/// board keeps up), and MB a minute of the MP4 beside the Motion-JPEG .MOV of the same frames.
func h264Bench() throws {
  let threads = H264Settings.threadsBesideTheLoop(threads: CPUUse.threads())
  let preset = H264Preset.superfast
  print("")
  print("H.264 movies: libx264 \(preset.rawValue), \(threads) thread\(threads == 1 ? "" : "s"), 30 fps, preset high's bit rate; wall time")
  print("size       source frames |   ours ffmpeg  ours/ffmpeg | cores per s of movie | MB/min  MP4    MOV")
  for (width, height, frames) in [(1280, 720, 120), (1920, 1080, 90)] {
    let sources = movingFrames(width: width, height: height, count: 30)
    let jpegs = try sources.map { try StillPipeline.encode($0, quality: quality).jpeg }
    let bitRate = MovieQuality.high.h264BitRate(width: width, height: height, frameRate: 30)
    for source in ["YUYV", "MJPEG"] {
      let frames30: [StillFrame] = source == "YUYV"
        ? sources
        : jpegs.map { StillFrame(format: .mjpeg, width: width, height: height, bytesPerLine: 0, range: .full, bytes: $0) }
      let (ours, cpu, mp4Bytes) = try recordH264(frames30, width: width, height: height, frames: frames, preset: preset)
      let peer = try ffmpegH264(
        source == "YUYV" ? .raw(sources) : .mjpeg(jpegs), width: width, height: height, frames: frames, preset: preset,
        threads: threads, bitRate: bitRate)
      let movieSeconds = Double(frames) / 30
      var movBytes = "-"
      if source == "MJPEG" {
        let mov = try recordMJPEG(frames30, width: width, height: height, frames: frames)
        movBytes = format(Double(mov) / 1e6 / movieSeconds * 60)
      }
      let label = "\(width)x\(height)".padding(toLength: 10, withPad: " ", startingAt: 0)
      print(
        "\(label) \(source.padding(toLength: 6, withPad: " ", startingAt: 0)) \(String(frames).leftPadded(6)) | "
          + "\(format(ours).leftPadded(6)) \((peer.map(format) ?? "-").leftPadded(6)) \((peer.map { format(ours / $0) } ?? "-").leftPadded(12)) | "
          + "\(format(cpu / movieSeconds).leftPadded(20)) | \(format(Double(mp4Bytes) / 1e6 / movieSeconds * 60).leftPadded(12)) \(movBytes.leftPadded(6))")
    }
  }
  print("ours and ffmpeg in seconds for all the frames; ratios at or below 1 mean ours is as fast. Cores per second:")
  print("CPU seconds of every thread of ours per second of movie. MOV: the same MJPEG frames kept as they are.")
}

/// `count` frames of a textured scene panning two pixels a frame: what x264 has to search, unlike one
/// frame repeated, which it codes as nothing.
func movingFrames(width: Int, height: Int, count: Int) -> [StillFrame] {
  let wide = syntheticFrame(.yuyv, width: width + 2 * count, height: height)
  return (0..<count).map { index in
    var bytes = [UInt8](repeating: 0, count: width * 2 * height)
    for y in 0..<height {
      let from = y * wide.bytesPerLine + index * 4
      bytes.replaceSubrange(y * width * 2..<(y + 1) * width * 2, with: wide.bytes[from..<from + width * 2])
    }
    return StillFrame(format: .yuyv, width: width, height: height, bytesPerLine: width * 2, range: .limited, bytes: bytes)
  }
}

private func processCPU() -> Double {
  var usage = rusage()
  getrusage(RUSAGE_SELF.rawValue, &usage)
  return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Seconds of wall time, CPU seconds of the whole process, and the published file's bytes.
private func recordH264(
  _ sources: [StillFrame], width: Int, height: Int, frames: Int, preset: H264Preset
) throws -> (Double, Double, Int) {
  let rollPath = "\(workDirectory)/roll-h264-\(width)-\(sources[0].format.fourcc)"
  try FileManager.default.createDirectory(atPath: rollPath, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: rollPath) }
  let roll = try CameraRoll(root: rollPath, suffix: "BENCH")
  let startCPU = processCPU()
  let start = now()
  let recorder = try MovieRecorder(
    roll: roll, width: width, height: height, frameRate: 30, preset: .high, sourceFormat: sources[0].format.fourcc,
    passthrough: sources[0].format == .mjpeg, codec: .h264, h264Encoder: .x264(preset), tag: "bench")
  for index in 0..<frames {
    // Wait rather than drop: this measures what the recorder sustains, not what it sheds.
    while recorder.pending >= recorder.queueBound { usleep(200) }
    recorder.submit(sources[index % sources.count], timestamp: Int64(index) * 33_333_333, sequence: UInt32(index))
  }
  let summary = try? recorder.stopAndWait().get()
  let seconds = Double(now() - start) / 1e9
  guard let summary, summary.frames == frames else { throw BenchFailure.lostFrames }
  return (seconds, processCPU() - startCPU, summary.bytes)
}

private func recordMJPEG(_ sources: [StillFrame], width: Int, height: Int, frames: Int) throws -> Int {
  let rollPath = "\(workDirectory)/roll-mov-\(width)"
  try FileManager.default.createDirectory(atPath: rollPath, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: rollPath) }
  let roll = try CameraRoll(root: rollPath, suffix: "BENCH")
  let recorder = try MovieRecorder(
    roll: roll, width: width, height: height, frameRate: 30, preset: .high, sourceFormat: "MJPG", passthrough: true,
    tag: "bench")
  for index in 0..<frames {
    while recorder.pending >= recorder.queueBound { usleep(200) }
    recorder.submit(sources[index % sources.count], timestamp: Int64(index) * 33_333_333, sequence: UInt32(index))
  }
  guard let summary = try? recorder.stopAndWait().get() else { throw BenchFailure.lostFrames }
  return summary.bytes
}

private enum PeerInput {
  case raw([StillFrame])
  case mjpeg([[UInt8]])
}

/// ffmpeg's time for the same frames to an MP4 with libx264, nil without ffmpeg.
private func ffmpegH264(
  _ input: PeerInput, width: Int, height: Int, frames: Int, preset: H264Preset, threads: Int, bitRate: Int
) throws -> Double? {
  guard let ffmpeg = which("ffmpeg") else { return nil }
  let path: String
  let format: [String]
  switch input {
  case .raw(let sources):
    path = "\(workDirectory)/h264-\(width).yuv"
    try Data(sources.flatMap(\.bytes)).write(to: URL(fileURLWithPath: path))
    format = ["-f", "rawvideo", "-pix_fmt", "yuyv422", "-s", "\(width)x\(height)"]
  case .mjpeg(let jpegs):
    path = "\(workDirectory)/h264-\(width).mjpeg"
    try Data(jpegs.flatMap { $0 }).write(to: URL(fileURLWithPath: path))
    format = ["-f", "mjpeg"]
  }
  var arguments = [ffmpeg, "-v", "error", "-y", "-stream_loop", "-1", "-r", "30"] + format + ["-i", path]
  arguments += ["-frames:v", "\(frames)", "-vf", "scale=out_range=tv", "-pix_fmt", "yuv420p", "-c:v", "libx264"]
  arguments += ["-preset", preset == .ultrafast ? "ultrafast" : preset.rawValue, "-profile:v", "high", "-bf", "0"]
  arguments += ["-g", "30", "-b:v", "\(bitRate)", "-threads", "\(threads)", "\(workDirectory)/ffmpeg-h264.mp4"]
  let start = now()
  guard try run(arguments) == 0 else { return nil }
  return Double(now() - start) / 1e9
}
