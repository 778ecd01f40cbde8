import Imaging
import JPEGCodec
import MediaFiles

/// A camera frame as a Motion-JPEG movie's sample, on a movie encoder's thread (the H.264 counterpart is
/// MoviePictures).
enum MovieJPEG {
  /// JPEG for one frame: YUYV and NV12 compressed from their planes, cut to `crop` (the digital zoom) and
  /// halved `halvings` times first; MJPEG as the camera made it, or, zoomed, decoded, cut and compressed again
  /// (at the frame's size, which a passthrough recording has).
  static func frame(_ frame: StillFrame, quality: Int, halvings: Int = 0, crop: PixelRect? = nil) -> [UInt8]? {
    if let crop, frame.format == .mjpeg { return try? StillPipeline.encode(frame, quality: quality, crop: crop).jpeg }
    let frame = crop.map { StillPipeline.zoomed(frame, to: $0) } ?? frame
    // The movie keeps only the picture, not the padding after it.
    if frame.format == .mjpeg { return Array(frame.bytes[0..<JPEGStructure.endBeforePadding(frame.bytes)]) }
    guard halvings > 0 else { return try? StillPipeline.encode(frame, quality: quality).jpeg }
    guard var planes = try? StillPipeline.planes(of: frame).halved() else { return nil }
    for _ in 1..<halvings { planes = planes.halved() }
    return try? JPEGEncoder.encode(planes, quality: quality)
  }
}
