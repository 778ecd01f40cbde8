import Imaging
import JPEGCodec
import Scaling
import VideoCodec

/// A camera frame as an H.264 encoder's input picture, on a movie encoder's thread: YUYV and NV12 of the
/// movie's size straight into the picture's planes; anything else (a JPEG, a digital zoom, a preset's smaller
/// size) through full-range planes that are scaled into it.
enum MoviePictures {
  static func picture(_ frame: StillFrame, width: Int, height: Int, crop: PixelRect?) -> H264Picture? {
    guard let picture = try? H264Picture(width: width, height: height) else { return nil }
    let target = picture.target
    if crop == nil, frame.width == width, frame.height == height, frame.format != .mjpeg {
      frame.bytes.withUnsafeBytes { bytes in
        if frame.format == .yuyv {
          EncoderPlanes.yuyv(bytes, stride: frame.bytesPerLine, range: frame.range, into: target)
        } else {
          EncoderPlanes.nv12(bytes, stride: frame.bytesPerLine, range: frame.range, into: target)
        }
      }
      return picture
    }
    guard let planes = fullRangePlanes(frame, crop: crop) else { return nil }
    EncoderPlanes.planes(planes, range: .full, into: target)
    return picture
  }

  /// The frame's picture, cut to the zoom's crop, in full-range planes (what stills are made from).
  private static func fullRangePlanes(_ frame: StillFrame, crop: PixelRect?) -> (any YCbCrPlanes)? {
    guard frame.format == .mjpeg else {
      return try? StillPipeline.planes(of: crop.map { StillPipeline.zoomed(frame, to: $0) } ?? frame)
    }
    guard let decoded = try? JPEGDecoder.decodePlanes(frame.bytes) else { return nil }
    guard let crop else { return decoded }
    return FrameZoom.planes(
      decoded, crop: StillPipeline.fitted(crop, from: (frame.width, frame.height), to: (decoded.width, decoded.height)))
  }
}
