#if canImport(Glibc)
  import Glibc
#endif
import CYUV
import Foundation
import Imaging
import JPEGCodec
import KioskCore
import KioskService
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
        // The service's path (KioskService.showPreview): libyuv through the Scaling adapter.
        var decodedPreview: LibYUVPreview?
        let ours = try median(runs) {
          try screen.withUnsafeMutableBytes { out in
            service.clearBorders(out, width: outWidth, height: outHeight, destinationStride: stride)
            try frameBytes.withUnsafeBytes { source in
              switch pixelFormat {
              case .yuyv: service.drawYUYV(source, stride: raw.bytesPerLine, into: out, destinationStride: stride)
              case .nv12: service.drawNV12(source, stride: raw.bytesPerLine, into: out, destinationStride: stride)
              case .mjpeg:
                let picture = try JPEGDecoder.decodeXRGB(source, covering: target.width, target.height)
                if decodedPreview?.sourceWidth != picture.width {
                  decodedPreview = LibYUVPreview(sourceWidth: picture.width, sourceHeight: picture.height, target: target)
                }
                picture.pixels.withUnsafeBytes {
                  decodedPreview!.drawXRGB($0, stride: picture.stride, into: out, destinationStride: stride)
                }
              }
            }
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
        let ffmpeg = try ffmpegPreview(frameBytes, pixelFormat, width, height, target)
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
  print("I420Rotate; MJPEG: TurboJPEG to XRGB at the DCT scale that covers the target, then ARGBScale);")
  print("pure: the reference PreviewScaler the tests compare against (nearest neighbour, one pass);")
  print("memcpy: one output frame; libyuv: bare YUY2ToARGB/NV12ToARGB at full size, then ARGBScale kFilterNone;")
  print("ffmpeg: swscale flags=neighbor to bgra (MJPEG: its decoder too), one process for 30 frames, slope.")
}

/// ffmpeg converting and scaling (and for MJPEG decoding) the same frame: CPU time per frame as the slope
/// between 1 and 30 frames, so its start-up does not count.
@MainActor func ffmpegPreview(_ bytes: [UInt8], _ format: PixelFormat, _ width: Int, _ height: Int, _ target: PixelRect) throws
  -> Double?
{
  guard let ffmpeg = which("ffmpeg") else { return nil }
  let input = "\(workDirectory)/preview.\(format == .mjpeg ? "mjpeg" : "yuv")"
  try Data(bytes).write(to: URL(fileURLWithPath: input))
  let source: [String] =
    switch format {
    case .mjpeg: ["-f", "mjpeg", "-i", input]
    case .nv12: ["-f", "rawvideo", "-pix_fmt", "nv12", "-s", "\(width)x\(height)", "-i", input]
    case .yuyv: ["-f", "rawvideo", "-pix_fmt", "yuyv422", "-s", "\(width)x\(height)", "-i", input]
    }
  func ffmpegRun(_ frames: Int) throws {
    try run(
      [ffmpeg, "-v", "error", "-y", "-stream_loop", "\(frames - 1)"] + source + [
        "-vf", "scale=\(target.width):\(target.height):flags=neighbor", "-pix_fmt", "bgra", "-f", "null", "-",
      ])
  }
  let frames = 30
  let one = try median(5, clock: childrenCPU) { try ffmpegRun(1) }
  let many = try median(5, clock: childrenCPU) { try ffmpegRun(frames) }
  return max(0, (many - one) / Double(frames - 1))
}
