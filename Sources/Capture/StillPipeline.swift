import Imaging
import JPEGCodec
import KioskCore
import MediaFiles
import Scaling

/// A frame copied out of the driver's buffer, with what is needed to read it.
public struct StillFrame: Sendable {
  public let format: PixelFormat
  public let width: Int
  public let height: Int
  public let bytesPerLine: Int
  public let range: YCbCrRange
  public let bytes: [UInt8]

  public init(format: PixelFormat, width: Int, height: Int, bytesPerLine: Int, range: YCbCrRange, bytes: [UInt8]) {
    self.format = format
    self.width = width
    self.height = height
    self.bytesPerLine = bytesPerLine
    self.range = range
    self.bytes = bytes
  }
}

public struct StillError: Error, Sendable, CustomStringConvertible {
  public let description: String
}

/// Frame to JPEG file bytes, in the stages the benchmark times one by one: planes, encode, EXIF.
public enum StillPipeline {
  public static let thumbnailWidth = 160
  public static let thumbnailHeight = 120
  static let thumbnailQuality = 75

  /// The compressed picture and the planes its thumbnail is made from.
  public struct Encoded: Sendable {
    public let jpeg: [UInt8]
    public let planes: any YCbCrPlanes
    public let width: Int
    public let height: Int

    public init(jpeg: [UInt8], planes: any YCbCrPlanes, width: Int, height: Int) {
      self.jpeg = jpeg
      self.planes = planes
      self.width = width
      self.height = height
    }
  }

  /// Full-range planes of a YUYV or NV12 frame; an MJPEG frame is decoded (for its thumbnail only).
  public static func planes(of frame: StillFrame) throws(StillError) -> any YCbCrPlanes {
    switch frame.format {
    case .yuyv:
      guard frame.bytes.count >= frame.bytesPerLine * frame.height else { throw StillError(description: "short YUYV frame") }
      return frame.bytes.withUnsafeBytes {
        PackedPlanes.yuyv($0, width: frame.width, height: frame.height, stride: frame.bytesPerLine, range: frame.range)
      }
    case .nv12:
      guard frame.bytes.count >= frame.bytesPerLine * (frame.height + (frame.height + 1) / 2) else {
        throw StillError(description: "short NV12 frame")
      }
      return frame.bytes.withUnsafeBytes {
        PackedPlanes.nv12($0, width: frame.width, height: frame.height, stride: frame.bytesPerLine, range: frame.range)
      }
    case .mjpeg:
      do {
        return try JPEGDecoder.decodePlanes(frame.bytes)
      } catch {
        throw StillError(description: "MJPEG frame does not decode: \(error)")
      }
    }
  }

  /// The picture as JPEG: YUYV and NV12 compressed from their planes; MJPEG kept as the camera made it.
  /// `crop` (the digital zoom, in the frame's pixels) cuts the picture to its centre and scales it back to the
  /// frame's size first, whatever the format: an MJPEG frame is then decoded, cut and compressed again at
  /// `quality` (a lossless JPEG crop would keep fewer pixels and move the crop to the 16-pixel block grid).
  /// `bands` > 1 compresses a YUYV or NV12 frame on that many cores (`encodeInBands`).
  public static func encode(
    _ frame: StillFrame, quality: Int, crop: PixelRect? = nil, bands: Int = 1
  ) throws(StillError) -> Encoded {
    if let crop, frame.format == .mjpeg { return try zoomedMJPEG(frame, crop: crop, quality: quality) }
    let frame = crop.map { zoomed(frame, to: $0) } ?? frame
    if bands > 1, let banded = try encodeInBands(frame, quality: quality, bands: bands) { return banded }
    let planes = try planes(of: frame)
    if frame.format == .mjpeg {
      return Encoded(jpeg: frame.bytes, planes: planes, width: planes.width, height: planes.height)
    }
    do {
      return Encoded(jpeg: try JPEGEncoder.encode(planes, quality: quality), planes: planes, width: frame.width, height: frame.height)
    } catch {
      throw StillError(description: "\(error)")
    }
  }

  /// An MJPEG frame decoded to its own planes (no colour conversion), cut, scaled back and compressed with the
  /// camera's chroma sampling.
  static func zoomedMJPEG(_ frame: StillFrame, crop: PixelRect, quality: Int) throws(StillError) -> Encoded {
    let decoded: PlanarYCbCr
    do {
      decoded = try JPEGDecoder.decodePlanes(frame.bytes)
    } catch {
      throw StillError(description: "MJPEG frame does not decode: \(error)")
    }
    let cut = FrameZoom.planes(decoded, crop: fitted(crop, from: (frame.width, frame.height), to: (decoded.width, decoded.height)))
    do {
      return Encoded(jpeg: try JPEGEncoder.encode(cut, quality: quality), planes: cut, width: cut.width, height: cut.height)
    } catch {
      throw StillError(description: "\(error)")
    }
  }

  /// `crop` of a `from`-sized frame for the picture the frame actually decodes to: the same rectangle when
  /// the camera's JPEG is the negotiated size (it always should be), else the same part of it, on even pixels.
  static func fitted(_ crop: PixelRect, from: (Int, Int), to: (Int, Int)) -> PixelRect {
    guard from != to, from.0 > 0, from.1 > 0 else { return crop }
    let width = max(2, crop.width * to.0 / from.0 & ~1)
    let height = max(2, crop.height * to.1 / from.1 & ~1)
    return PixelRect(x: ((to.0 - width) / 2) & ~1, y: ((to.1 - height) / 2) & ~1, width: width, height: height)
  }

  /// The file: EXIF (with a 160x120 thumbnail) first, then the picture's own segments and its scan unchanged.
  public static func withExif(_ encoded: Encoded, _ metadata: ExifMetadata) throws(StillError) -> [UInt8] {
    do {
      let structure = try JPEGStructure(encoded.jpeg)
      let small = encoded.planes.thumbnail(width: thumbnailWidth, height: thumbnailHeight)
      let thumbnail = try JPEGEncoder.encode(small, quality: thumbnailQuality)
      let app1 = try ExifWriter.app1Segment(metadata, thumbnail: thumbnail)
      return structure.replacingMetadata(of: encoded.jpeg, with: app1)
    } catch {
      throw StillError(description: "\(error)")
    }
  }

  /// A YUYV or NV12 frame cut to the zoom's crop and scaled back to the camera's size (so a still's or a
  /// movie's size is the configured one), on the still writer's or a movie encoder's thread. MJPEG is left as
  /// it is here: `encode(_:quality:crop:)` cuts it on the way to its new JPEG.
  static func zoomed(_ frame: StillFrame, to crop: PixelRect) -> StillFrame {
    let bytes: [UInt8]
    let stride: Int
    switch frame.format {
    case .yuyv:
      bytes = FrameZoom.yuyv(frame.bytes, stride: frame.bytesPerLine, width: frame.width, height: frame.height, crop: crop)
      stride = frame.width * 2
    case .nv12:
      bytes = FrameZoom.nv12(frame.bytes, stride: frame.bytesPerLine, width: frame.width, height: frame.height, crop: crop)
      stride = frame.width
    case .mjpeg:
      return frame
    }
    return StillFrame(
      format: frame.format, width: frame.width, height: frame.height, bytesPerLine: stride, range: frame.range,
      bytes: bytes)
  }
}
