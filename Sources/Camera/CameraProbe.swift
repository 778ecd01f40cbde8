#if canImport(Glibc)
  import Glibc
#endif
import CV4L2
import KioskCore
import LinuxIO

/// A frame interval the driver advertises, as a rate.
public struct FrameRate: Encodable, Sendable, Equatable {
  public let numerator: UInt32
  public let denominator: UInt32
  public var framesPerSecond: Double { numerator == 0 ? 0 : Double(denominator) / Double(numerator) }
}

public struct FrameSizeInfo: Encodable, Sendable, Equatable {
  public let width: Int
  public let height: Int
  public let frameRates: [FrameRate]
}

public struct CameraFormatInfo: Encodable, Sendable, Equatable {
  public let fourcc: String
  public let description: String
  /// Made by libv4l2's converter from another format, not by the hardware.
  public let emulated: Bool
  /// The driver takes any size between the two in `sizes` (stepwise or continuous), not only those listed.
  public let stepwiseSizes: Bool
  public let sizes: [FrameSizeInfo]
}

/// What one V4L2 capture device offers.
public struct CameraInfo: Encodable, Sendable, Equatable {
  public let path: String
  public let driver: String
  public let card: String
  public let bus: String
  public let capture: Bool
  public let streaming: Bool
  public let formats: [CameraFormatInfo]
  /// The camera's own zoom control (V4L2_CID_ZOOM_ABSOLUTE) when it has one the kiosk can set; the zoom
  /// buttons drive it before the digital crop.
  public let zoomControl: CameraZoomRange?
  /// "camera control 100..500" or "digital only", with zoom controls that are there but not used.
  public let zoom: String
  /// The formats offered that the digital zoom can crop (`PixelFormat.fourcc`): every format the kiosk
  /// streams, MJPEG too (decoded, cut and compressed again for stills and movies).
  public let croppableFormats: [String]
}

public enum CameraProbe {
  /// Every `/dev/video*` node that is a video capture device, in number order.
  public static func list(devicesIn directory: String = "/dev") -> [CameraInfo] {
    Array(captureDevices(in: directory))
  }

  /// The capture devices in number order, each opened and described only when the sequence reaches it: a caller
  /// that stops at the first it can use opens none after it. `sizesOf` as in `describe`.
  public static func captureDevices(in directory: String = "/dev", sizesOf fourcc: String? = nil)
    -> LazyMapSequence<LazyFilterSequence<LazyMapSequence<[String], CameraInfo?>>, CameraInfo>
  {
    DirectoryListing.numberedNodes(in: directory, prefix: "video").lazy.compactMap { (path) -> CameraInfo? in
      guard let info = try? describe(path, sizesOf: fourcc), info.capture else { return nil }
      return info
    }
  }

  /// What the device at `path` is and offers; formats only for capture devices. With `sizesOf`, the sizes and
  /// rates of that format alone (the others are listed with none): what a camera is judged by at the service's
  /// start. vivid offers 84 formats at six sizes: all of their rates are about 4,000 ioctls a node, and the
  /// start described two nodes twice.
  public static func describe(_ path: String, sizesOf fourcc: String? = nil) throws(CameraError) -> CameraInfo {
    let device = try V4L2Device(path: path, nonBlocking: true)
    var capability = v4l2_capability()
    try device.control("VIDIOC_QUERYCAP", CV4L2_VIDIOC_QUERYCAP(), &capability)
    // device_caps describes this node; capabilities describes the whole physical device.
    let caps =
      capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? capability.device_caps : capability.capabilities
    let capture = caps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0
    let formats = capture ? try formats(of: device, sizesOf: fourcc) : []
    let zoomControl = capture ? device.zoomRange : nil
    let croppable = PixelFormat.allCases.map(\.fourcc).filter { fourcc in formats.contains { $0.fourcc == fourcc } }
    return CameraInfo(
      path: path, driver: cString(capability.driver), card: cString(capability.card),
      bus: cString(capability.bus_info), capture: capture, streaming: caps & UInt32(V4L2_CAP_STREAMING) != 0,
      formats: formats, zoomControl: zoomControl,
      zoom: capture ? CameraZoomRange.summary(zoomControl, others: device.otherZoomControls) : "none",
      croppableFormats: croppable)
  }

  static func formats(of device: V4L2Device, sizesOf wanted: String?) throws(CameraError) -> [CameraFormatInfo] {
    var result: [CameraFormatInfo] = []
    var description = v4l2_fmtdesc()
    description.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    while try device.enumerate("VIDIOC_ENUM_FMT", CV4L2_VIDIOC_ENUM_FMT(), &description) {
      // Only libv4l2 knows the sizes and rates of the formats it makes; the driver is asked for its own.
      let emulated = description.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0
      let fourcc = FourCC(code: description.pixelformat).description
      let (sizes, stepwise) =
        wanted == nil || wanted == fourcc
        ? try sizes(of: device, format: description.pixelformat, kernel: !emulated) : ([], false)
      result.append(
        CameraFormatInfo(
          fourcc: fourcc, description: cString(description.description),
          emulated: emulated, stepwiseSizes: stepwise, sizes: sizes))
      description.index += 1
    }
    return result
  }

  static func sizes(of device: V4L2Device, format: UInt32, kernel: Bool) throws(CameraError)
    -> ([FrameSizeInfo], stepwise: Bool)
  {
    var result: [FrameSizeInfo] = []
    var stepwise = false
    var size = v4l2_frmsizeenum()
    size.pixel_format = format
    while try device.enumerate("VIDIOC_ENUM_FRAMESIZES", CV4L2_VIDIOC_ENUM_FRAMESIZES(), &size, kernel: kernel) {
      if size.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
        let width = Int(size.discrete.width)
        let height = Int(size.discrete.height)
        result.append(
          FrameSizeInfo(
            width: width, height: height,
            frameRates: try rates(of: device, format: format, width: width, height: height, kernel: kernel)))
      } else {
        // Stepwise and continuous ranges: report the two ends, which is what a still or preview picks from.
        stepwise = true
        let wise = size.stepwise
        for (width, height) in [(wise.min_width, wise.min_height), (wise.max_width, wise.max_height)] {
          result.append(
            FrameSizeInfo(
              width: Int(width), height: Int(height),
              frameRates: try rates(
                of: device, format: format, width: Int(width), height: Int(height), kernel: kernel)))
        }
        break
      }
      size.index += 1
    }
    return (result, stepwise)
  }

  static func rates(of device: V4L2Device, format: UInt32, width: Int, height: Int, kernel: Bool)
    throws(CameraError) -> [FrameRate]
  {
    var result: [FrameRate] = []
    var interval = v4l2_frmivalenum()
    interval.pixel_format = format
    interval.width = UInt32(width)
    interval.height = UInt32(height)
    while try device.enumerate(
      "VIDIOC_ENUM_FRAMEINTERVALS", CV4L2_VIDIOC_ENUM_FRAMEINTERVALS(), &interval, kernel: kernel)
    {
      if interval.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
        result.append(FrameRate(numerator: interval.discrete.numerator, denominator: interval.discrete.denominator))
      } else {
        result.append(FrameRate(numerator: interval.stepwise.min.numerator, denominator: interval.stepwise.min.denominator))
        result.append(FrameRate(numerator: interval.stepwise.max.numerator, denominator: interval.stepwise.max.denominator))
        break
      }
      interval.index += 1
    }
    return result
  }
}
