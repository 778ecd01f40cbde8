#if canImport(Glibc)
  import Glibc
#endif
import CameraRoll
import Imaging
import JPEGCodec
import KioskCore
import LinuxIO
import MediaFiles
import Scaling

/// A decoded picture and the scaler that fits it, aspect kept, to the whole screen.
public struct FittedPicture: Sendable {
  public let picture: XRGBImage
  public let scaler: PreviewScaler
  /// The file's own size, before the DCT scale.
  public let sourceWidth: Int
  public let sourceHeight: Int

  /// Decodes `jpeg` at the largest DCT scale that still covers the rectangle it fills on a `screenWidth` x
  /// `screenHeight` panel turned by `orientation`: a 12-megapixel photo on a 1280x800 screen decodes at 1/2 or
  /// 1/4, never at full size, and the scaler only ever shrinks what is left. On `threads` cores when the file
  /// is cut by restart markers on MCU rows, as our own stills are (`PictureDecode`).
  public static func decode(
    _ jpeg: [UInt8], screenWidth: Int, screenHeight: Int, orientation: PreviewOrientation, threads: Int = 1
  ) throws(JPEGError) -> FittedPicture {
    let header = try JPEGDecoder.header(jpeg)
    let (fitWidth, fitHeight) = orientation.turned(header.width, header.height)
    let target = PixelRect.aspectFit(sourceWidth: fitWidth, sourceHeight: fitHeight, into: screenWidth, screenHeight)
    let (coverWidth, coverHeight) = orientation.turned(target.width, target.height)
    let picture = try PictureDecode.xrgb(jpeg, covering: coverWidth, coverHeight, threads: threads)
    return FittedPicture(
      picture: picture,
      scaler: PreviewScaler(
        sourceWidth: picture.width, sourceHeight: picture.height, target: target, orientation: orientation),
      sourceWidth: header.width, sourceHeight: header.height)
  }

  /// A photo's Exif thumbnail, shown in the place the photo will take while the photo decodes. DCF thumbnails
  /// are 160x120 with black bars for other shapes: only the part the photo fills is used.
  public static func thumbnail(
    _ jpeg: UnsafeRawBufferPointer, of width: Int, _ height: Int, screenWidth: Int, screenHeight: Int,
    orientation: PreviewOrientation
  ) throws(JPEGError) -> FittedPicture {
    let header = try JPEGDecoder.header(jpeg)
    let small = try JPEGDecoder.decodeXRGB(jpeg, covering: header.width, header.height)
    let inner = PixelRect.aspectFit(sourceWidth: width, sourceHeight: height, into: small.width, small.height)
    let picture = small.cropped(to: inner)
    let (fitWidth, fitHeight) = orientation.turned(width, height)
    let target = PixelRect.aspectFit(sourceWidth: fitWidth, sourceHeight: fitHeight, into: screenWidth, screenHeight)
    return FittedPicture(
      picture: picture,
      scaler: PreviewScaler(
        sourceWidth: picture.width, sourceHeight: picture.height, target: target, orientation: orientation),
      sourceWidth: width, sourceHeight: height)
  }

  /// The libyuv scaler for this picture's geometry, the one the preview draws with (the pure `scaler` is
  /// the geometry and the tests' reference); `previous` is kept when it fits, since it owns its buffers.
  public func libyuvScaler(reusing previous: LibYUVPreview?) -> LibYUVPreview {
    if let previous, previous.sourceWidth == picture.width, previous.sourceHeight == picture.height,
      previous.target == scaler.target, previous.orientation == scaler.orientation
    {
      return previous
    }
    return LibYUVPreview(
      sourceWidth: picture.width, sourceHeight: picture.height, target: scaler.target, orientation: scaler.orientation)
  }

  /// Letterbox bars black, the picture in its rectangle, through `fitter` (from `libyuvScaler`).
  public func draw(into pixels: UnsafeMutableRawBufferPointer, width: Int, height: Int, stride: Int, with fitter: LibYUVPreview) {
    fitter.clearBorders(pixels, width: width, height: height, destinationStride: stride)
    picture.pixels.withUnsafeBytes { source in
      fitter.drawXRGB(source, stride: picture.stride, into: pixels, destinationStride: stride)
    }
  }
}

/// One roll item ready to show in review mode: its picture (a movie's first frame) and its words.
public struct ViewedItem: Sendable {
  public let path: String
  public let fitted: FittedPicture
  /// Capture time as people read it: `2026-11-29 14:05`.
  public let date: String
  /// A movie's sample table; nil for a still.
  public let movie: MovieIndex?
  /// False for a photo's Exif thumbnail, shown until the photo itself is decoded.
  public var full = true
}

/// Reading the roll for review mode; runs on a worker, never on the loop.
public enum RollViewer {
  /// Every published still and movie, for the kiosk's review mode.
  public static func entries(root: String) -> [RollEntry] {
    var entries: [RollEntry] = []
    for folder in DirectoryListing.names(in: "\(root)/DCIM") where RollNumber.folderNumber(of: folder) != nil {
      for name in DirectoryListing.names(in: "\(root)/DCIM/\(folder)") {
        if let entry = RollEntry(path: "DCIM/\(folder)/\(name)") { entries.append(entry) }
      }
    }
    return entries
  }

  /// Reads and decodes `entry`; a photo with an Exif thumbnail is handed to `early` first, so something is on
  /// screen in a few milliseconds whatever the photo's size.
  public static func load(
    _ entry: RollEntry, root: String, screenWidth: Int, screenHeight: Int, orientation: PreviewOrientation,
    threads: Int = 1, early: (ViewedItem) -> Void = { _ in }
  ) throws -> ViewedItem {
    let path = "\(root)/\(entry.path)"
    let file = try OwnedFD(opening: path, flags: O_RDONLY | O_CLOEXEC)
    var info = stat()
    let date = fstat(file.raw, &info) == 0 ? Self.date(info.st_mtim.tv_sec) : ""
    switch entry.kind {
    case .still:
      let bytes = try file.readToEnd()
      // A photo from a camera mounted on its side says so in its Exif; it is shown upright, then as the panel
      // is turned.
      let upright = ExifThumbnail.orientation(in: bytes)?.uprightRotation ?? 0
      let orientation = PreviewOrientation(rotation: (orientation.rotation + upright) % 360, mirror: orientation.mirror)
      if let range = ExifThumbnail.range(in: bytes), let header = try? JPEGDecoder.header(bytes),
        let thumbnail = try? bytes[range].withUnsafeBytes({ (jpeg) throws(JPEGError) in
          try FittedPicture.thumbnail(
            jpeg, of: header.width, header.height, screenWidth: screenWidth, screenHeight: screenHeight,
            orientation: orientation)
        })
      {
        early(ViewedItem(path: entry.path, fitted: thumbnail, date: date, movie: nil, full: false))
      }
      let fitted = try FittedPicture.decode(
        bytes, screenWidth: screenWidth, screenHeight: screenHeight, orientation: orientation, threads: threads)
      return ViewedItem(path: entry.path, fitted: fitted, date: date, movie: nil)
    case .movie:
      let index = try movieIndex(file)
      let frames = try MovieFrames(index) { sample in try file.read(at: sample.offset, count: sample.size) }
      let fitted = try frames.picture(0, screenWidth: screenWidth, screenHeight: screenHeight, orientation: orientation)
      return ViewedItem(path: entry.path, fitted: fitted, date: date, movie: index)
    }
  }

  static func movieIndex(_ file: borrowing OwnedFD) throws -> MovieIndex {
    let length = try file.size()
    var failure: SystemCallError?
    let index = try MovieIndex.read(length: length) { offset, count in
      do throws(SystemCallError) {
        return try file.read(at: offset, count: count)
      } catch {
        failure = error
        return []
      }
    }
    if let failure { throw failure }
    return index
  }

  /// Local wall-clock time of the file: the capture time for our own items (written once, never touched).
  static func date(_ seconds: Int) -> String {
    var time = seconds
    var parts = tm()
    guard localtime_r(&time, &parts) != nil else { return "" }
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min))"
  }

  /// m:ss of a movie's length.
  public static func length(_ nanoseconds: Int64) -> String {
    let seconds = Int((nanoseconds + 500_000_000) / 1_000_000_000)
    return "\(seconds / 60):\(seconds % 60 < 10 ? "0" : "")\(seconds % 60)"
  }
}
