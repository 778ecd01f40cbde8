#if canImport(Glibc)
  import Glibc
#endif
import CYUV
import Foundation
import Imaging
import JPEGCodec
import KioskCore
import Capture
import Scaling

/// Per-frame preview cost: camera frame to a display buffer, against one memcpy of the output frame (the
/// floor: every preview writes that much), libyuv (convert, then nearest-neighbour scale: it has no one-pass
/// YUYV scaler) and ffmpeg's swscale (neighbor flag, BGRA out, per-frame slope), all in the same run.
@MainActor func previewBench() throws {
  let inputs = [(1280, 720), (1920, 1080)]
  let outputs = [(1280, 800), (1920, 1080)]
  print("")
  print("preview: camera frame to an XRGB8888 display buffer (aspect fit, letterbox), CPU ms per frame, medians")
  print("input               output     memcpy service    pure  libyuv  ffmpeg | svc/memcpy  svc/libyuv  svc/ffmpeg")
  var mjpegBreakdown: [MJPEGBreakdown] = []
  for (width, height) in inputs {
    for pixelFormat in [PixelFormat.yuyv, .nv12, .mjpeg] {
      let raw = syntheticFrame(pixelFormat == .nv12 ? .nv12 : .yuyv, width: width, height: height)
      var frameBytes = raw.bytes
      if pixelFormat == .mjpeg {
        // A camera's MJPEG frame stands in as our own 4:2:2 JPEG of the same textured picture.
        let planes = try StillPipeline.planes(of: raw)
        frameBytes = try JPEGEncoder.encode(planes, quality: 80)
      }
      for (outWidth, outHeight) in outputs {
        let stride = outWidth * 4
        var screen = [UInt8](repeating: 0, count: stride * outHeight)
        let other = [UInt8](repeating: 1, count: stride * outHeight)
        let target = PixelRect.aspectFit(sourceWidth: width, sourceHeight: height, into: outWidth, outHeight)
        let reference = PreviewScaler(sourceWidth: width, sourceHeight: height, target: target)
        let service = LibYUVPreview(sourceWidth: width, sourceHeight: height, target: target)
        let runs = 15
        let floor = median(runs) {
          screen.withUnsafeMutableBytes { out in other.withUnsafeBytes { out.copyMemory(from: $0) } }
        }
        // The service's path (ScreenSink.showFrame): libyuv through the Scaling adapter; MJPEG through
        // one reused TurboJPEG decoder to planes at the DCT scale, then libyuv's scale and conversion.
        let decoder = try JPEGPlaneDecoder()
        var decodedPreview: LibYUVPreview?
        let (coverWidth, coverHeight) = (target.width, target.height)
        let ours = try median(runs) {
          try screen.withUnsafeMutableBytes { out in
            service.clearBorders(out, width: outWidth, height: outHeight, destinationStride: stride)
            try frameBytes.withUnsafeBytes { source in
              switch pixelFormat {
              case .yuyv: service.drawYUYV(source, stride: raw.bytesPerLine, into: out, destinationStride: stride)
              case .nv12: service.drawNV12(source, stride: raw.bytesPerLine, into: out, destinationStride: stride)
              case .mjpeg:
                let picture = try decoder.decode(source, covering: coverWidth, coverHeight)
                if decodedPreview?.sourceWidth != picture.width {
                  decodedPreview = LibYUVPreview(sourceWidth: picture.width, sourceHeight: picture.height, target: target)
                }
                decodedPreview!.drawPlanes(picture, into: out, destinationStride: stride)
              }
            }
          }
        }
        // Where an MJPEG frame's time goes: TurboJPEG's decode alone (entropy decoding and IDCT, to planes).
        var decodeOnly: Double?
        if pixelFormat == .mjpeg {
          decodeOnly = try median(runs) {
            _ = try frameBytes.withUnsafeBytes { try decoder.decode($0, covering: coverWidth, coverHeight) }
          }
        }
        // The pure reference the tests hold the service's path to.
        let pure = try median(runs) {
          try screen.withUnsafeMutableBytes { out in
            reference.clearBorders(out, width: outWidth, height: outHeight, destinationStride: stride)
            try frameBytes.withUnsafeBytes { source in
              switch pixelFormat {
              case .yuyv: reference.drawYUYV(source, stride: raw.bytesPerLine, into: out, destinationStride: stride)
              case .nv12: reference.drawNV12(source, stride: raw.bytesPerLine, into: out, destinationStride: stride)
              case .mjpeg:
                let picture = try JPEGDecoder.decodeXRGB(source, covering: target.width, target.height)
                let fit = PreviewScaler(sourceWidth: picture.width, sourceHeight: picture.height, target: target)
                picture.pixels.withUnsafeBytes {
                  fit.drawXRGB($0, stride: picture.stride, into: out, destinationStride: stride)
                }
              }
            }
          }
        }
        var libyuv: Double?
        if pixelFormat != .mjpeg {
          var converted = [UInt8](repeating: 0, count: width * height * 4)
          libyuv = median(runs) {
            converted.withUnsafeMutableBufferPointer { argb in
              frameBytes.withUnsafeBufferPointer { source in
                let base = source.baseAddress!
                if pixelFormat == .nv12 {
                  _ = NV12ToARGB(base, Int32(width), base + width * height, Int32(width), argb.baseAddress, Int32(width * 4),
                    Int32(width), Int32(height))
                } else {
                  _ = YUY2ToARGB(base, Int32(width * 2), argb.baseAddress, Int32(width * 4), Int32(width), Int32(height))
                }
              }
              screen.withUnsafeMutableBufferPointer { out in
                let start = out.baseAddress! + target.y * stride + target.x * 4
                _ = ARGBScale(argb.baseAddress, Int32(width * 4), Int32(width), Int32(height), start, Int32(stride),
                  Int32(target.width), Int32(target.height), kFilterNone)
              }
            }
          }
        }
        let ffmpeg = try ffmpegPreview(frameBytes, pixelFormat, width, height, target, scale: true)
        if let decodeOnly {
          mjpegBreakdown.append(
            MJPEGBreakdown(
              input: "\(width)x\(height)", output: "\(outWidth)x\(outHeight)", denominator: decoder.denominator,
              decode: decodeOnly, service: ours, ffmpegDecode: try ffmpegPreview(frameBytes, pixelFormat, width, height, target, scale: false),
              ffmpeg: ffmpeg))
        }
        let label = "\(pixelFormat.fourcc) \(width)x\(height)".padding(toLength: 19, withPad: " ", startingAt: 0)
        let outLabel = "\(outWidth)x\(outHeight)".padding(toLength: 9, withPad: " ", startingAt: 0)
        func ratio(_ peer: Double?) -> String { peer.map { $0 > 0 ? format(ours / $0) : "-" } ?? "-" }
        let columns =
          [floor, ours, pure].map { format($0).leftPadded(7) }
          + [libyuv, ffmpeg].map { ($0.map(format) ?? "-").leftPadded(7) }
        print("\(label) \(outLabel) \(columns.joined(separator: " ")) | \(ratio(floor).leftPadded(11)) \(ratio(libyuv).leftPadded(11)) \(ratio(ffmpeg).leftPadded(11))")
      }
    }
  }
  print("")
  print("service: what the service runs, the Scaling adapter (libyuv, nearest: YUYV pairs scaled packed with")
  print("ARGBScale, NV12 with NV12Scale, then YUY2ToARGB/NV12ToARGB straight into the buffer; turned frames via")
  print("I420Rotate; MJPEG: one reused TurboJPEG decoder to YCbCr planes at the DCT scale that covers the target,")
  print("then ScalePlane and J422ToARGB, or J422ToARGB alone at the target's size);")
  print("pure: the reference PreviewScaler the tests compare against (nearest neighbour, one pass; MJPEG: TurboJPEG")
  print("to XRGB, then the same scaler);")
  print("memcpy: one output frame; libyuv: bare YUY2ToARGB/NV12ToARGB at full size, then ARGBScale kFilterNone;")
  print("ffmpeg: swscale flags=neighbor to bgra (MJPEG: its decoder too), one process for 30 frames, slope; one")
  print("thread (-threads 1 -filter_threads 1), as the service's preview is; its CPU time, as ours is ours.")
  print("")
  print("MJPEG, where the time goes (ms per frame): TurboJPEG's decode alone (entropy decoding and IDCT, to planes")
  print("at the DCT scale; no upsampling or colour conversion), the rest of the service's path (scale and convert),")
  print("and ffmpeg's decode alone (same frames, no scale, -threads 1); ceiling = ffmpeg / our decode alone: the")
  print("best svc/ffmpeg ratio even a free scale-and-convert could reach with this decoder.")
  print("input      output     DCT  decode  rest | ffmpeg-decode  ffmpeg | ffmpeg/svc  ceiling")
  for row in mjpegBreakdown {
    let ceiling = row.ffmpeg.map { format($0 / row.decode) } ?? "-"
    let speedup = row.ffmpeg.map { format($0 / row.service) } ?? "-"
    print(
      "\(row.input.padding(toLength: 10, withPad: " ", startingAt: 0)) \(row.output.padding(toLength: 9, withPad: " ", startingAt: 0)) 1/\(row.denominator) \(format(row.decode).leftPadded(7)) \(format(max(0, row.service - row.decode)).leftPadded(5)) | \((row.ffmpegDecode.map(format) ?? "-").leftPadded(13)) \((row.ffmpeg.map(format) ?? "-").leftPadded(7)) | \(speedup.leftPadded(10)) \(ceiling.leftPadded(8))")
  }
}

struct MJPEGBreakdown {
  let input: String
  let output: String
  let denominator: Int
  let decode: Double
  let service: Double
  let ffmpegDecode: Double?
  let ffmpeg: Double?
}

/// ffmpeg converting and scaling (and for MJPEG decoding) the same frame: CPU time per frame as the slope
/// between 1 and 30 frames, so its start-up does not count.
@MainActor func ffmpegPreview(
  _ bytes: [UInt8], _ format: PixelFormat, _ width: Int, _ height: Int, _ target: PixelRect, scale: Bool
) throws -> Double? {
  guard let ffmpeg = which("ffmpeg") else { return nil }
  let input = "\(workDirectory)/preview.\(format == .mjpeg ? "mjpeg" : "yuv")"
  try Data(bytes).write(to: URL(fileURLWithPath: input))
  let source: [String] =
    switch format {
    case .mjpeg: ["-f", "mjpeg", "-i", input]
    case .nv12: ["-f", "rawvideo", "-pix_fmt", "nv12", "-s", "\(width)x\(height)", "-i", input]
    case .yuyv: ["-f", "rawvideo", "-pix_fmt", "yuyv422", "-s", "\(width)x\(height)", "-i", input]
    }
  // One thread everywhere (decoder, filter graph): the service's preview is one thread too.
  let output = scale ? ["-vf", "scale=\(target.width):\(target.height):flags=neighbor", "-pix_fmt", "bgra"] : []
  func ffmpegRun(_ frames: Int) throws {
    try run(
      [ffmpeg, "-v", "error", "-y", "-filter_threads", "1", "-threads", "1", "-stream_loop", "\(frames - 1)"] + source
        + ["-threads", "1"] + output + ["-f", "null", "-"])
  }
  let frames = 30
  let one = try median(5, clock: childrenCPU) { try ffmpegRun(1) }
  let many = try median(5, clock: childrenCPU) { try ffmpegRun(frames) }
  return max(0, (many - one) / Double(frames - 1))
}
