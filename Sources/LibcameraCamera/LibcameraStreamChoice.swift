import KioskCore

/// Which of a libcamera camera's viewfinder formats and sizes the kiosk streams: pure, so the probe's verdict
/// and the stream's configuration are the same choice and are tested without a camera.
public struct LibcameraStreamChoice: Sendable, Equatable {
  /// libcamera's name of the format (NV12, MJPEG, YUYV).
  public let format: String
  public let fourcc: String
  public let size: Size

  /// libcamera's names of the formats the preview, still and movie paths take, most wanted first after the
  /// configured one: NV12 is what a Pi's ISP gives, MJPEG and YUYV what a UVC webcam gives. Not YUV420, though
  /// the ISP offers it too: its three planes fit none of the frame paths, which read NV12 as one run of bytes.
  public static let usable = ["NV12", "MJPEG", "YUYV"]

  /// `[camera] format` in libcamera's spelling.
  public static func name(of format: PixelFormat) -> String {
    switch format {
    case .nv12: "NV12"
    case .mjpeg: "MJPEG"
    case .yuyv: "YUYV"
    }
  }

  /// The configured format when the camera offers it at `size`, else the first usable one that does; the
  /// failure says what the camera offers instead.
  public static func choose(_ camera: LibcameraCameraInfo, preferring format: PixelFormat, size: Size)
    -> Result<LibcameraStreamChoice, LibcameraChoiceFailure>
  {
    let order = [name(of: format)] + usable.filter { $0 != name(of: format) }
    for wanted in order {
      guard let offered = camera.formats.first(where: { $0.name == wanted }), offers(offered, size) else { continue }
      return .success(LibcameraStreamChoice(format: offered.name, fourcc: offered.fourcc, size: size))
    }
    let offered = camera.formats.map { "\($0.name) \($0.sizes.joined(separator: $0.sizeRange ? "-" : " "))" }
    let what = offered.isEmpty ? "no viewfinder format" : offered.joined(separator: ", ")
    return .failure(LibcameraChoiceFailure(reason: "none of \(order.joined(separator: " ")) at \(size) (offers \(what))"))
  }

  static func offers(_ format: LibcameraFormatInfo, _ size: Size) -> Bool {
    let sizes = format.parsedSizes
    if format.sizeRange, let low = sizes.first, let high = sizes.last {
      return (low.width...high.width).contains(size.width) && (low.height...high.height).contains(size.height)
    }
    return sizes.contains(size)
  }
}

public struct LibcameraChoiceFailure: Error, Sendable, Equatable {
  public let reason: String
  public init(reason: String) { self.reason = reason }
}
