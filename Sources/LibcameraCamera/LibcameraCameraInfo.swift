import CLibcameraShim
import KioskCore
import LinuxIO

/// One pixel format a libcamera camera offers for a viewfinder stream, with its sizes.
public struct LibcameraFormatInfo: Encodable, Sendable, Equatable {
  /// libcamera's name for it: NV12, YUV420, MJPEG, YUYV...
  public let name: String
  /// The DRM four-character code libcamera uses (YUV420 is YU12, MJPEG is MJPG).
  public let fourcc: String
  /// Any size between the two in `sizes`, not only those listed.
  public let sizeRange: Bool
  public let sizes: [String]

  public init(name: String, fourcc: String, sizeRange: Bool, sizes: [Size]) {
    self.name = name
    self.fourcc = fourcc
    self.sizeRange = sizeRange
    self.sizes = sizes.map(\.description)
  }

  var parsedSizes: [Size] { sizes.compactMap { Size(parsing: $0) } }
}

/// What `kioskcam probe` shows of one libcamera camera.
public struct LibcameraCameraInfo: Encodable, Sendable, Equatable {
  /// libcamera's id: a CSI sensor's device-tree path (`/base/soc/i2c0mux/i2c@1/imx708@1a`), a UVC camera's USB path.
  public let id: String
  /// properties::Model (`imx708_wide`, a webcam's product name).
  public let model: String
  /// properties::Location: front, back or external; nil when the camera does not say.
  public let location: String?
  public let formats: [LibcameraFormatInfo]
  /// Zoom by cropping on the sensor's side (controls::ScalerCrop).
  public let scalerCrop: Bool
  /// Autofocus that can be triggered (controls::AfTrigger): Camera Module 3.
  public let autofocus: Bool

  public init(
    id: String, model: String, location: String?, formats: [LibcameraFormatInfo], scalerCrop: Bool, autofocus: Bool
  ) {
    self.id = id
    self.model = model
    self.location = location
    self.formats = formats
    self.scalerCrop = scalerCrop
    self.autofocus = autofocus
  }

  init(_ info: kioskcam_lc_camera_info) {
    var info = info
    let formats = withUnsafeBytes(of: &info.formats) { raw in
      Array(raw.bindMemory(to: kioskcam_lc_format.self).prefix(Int(info.format_count)))
    }.map { format in
      var format = format
      let name = withUnsafeBytes(of: &format.name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
      let sizes = withUnsafeBytes(of: &format.sizes) { raw in
        raw.bindMemory(to: kioskcam_lc_size.self).prefix(Int(format.size_count)).map {
          Size(width: Int($0.width), height: Int($0.height))
        }
      }
      return LibcameraFormatInfo(
        name: name, fourcc: FourCC(code: format.fourcc).description, sizeRange: format.range != 0, sizes: sizes)
    }
    let locations = [0: "front", 1: "back", 2: "external"]
    self.init(
      id: withUnsafeBytes(of: &info.id) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) },
      model: withUnsafeBytes(of: &info.model) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) },
      location: locations[Int(info.location)], formats: formats, scalerCrop: info.has_scaler_crop != 0,
      autofocus: info.has_af_trigger != 0)
  }
}
