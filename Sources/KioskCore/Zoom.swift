/// What a zoom button or `kioskcam zoom` asks for.
public enum ZoomChange: String, Sendable, Equatable, CaseIterable {
  case zoomIn = "in"
  case zoomOut = "out"
  case reset
}

/// The camera's own zoom, as its driver or pipeline describes it. Two kinds:
///
/// - `control`: V4L2_CID_ZOOM_ABSOLUTE. The values are in the driver's units: V4L2 promises no magnification
///   for them (UVC's are the lens's focal length in the maker's units, 100..500 on some webcams, 0..3 on
///   others), so the kiosk only walks the range, before the digital zoom.
/// - `sensorCrop`: libcamera's ScalerCrop, a crop the ISP takes from the sensor's full resolution. The values
///   are magnifications in hundredths (100 = the whole default crop), up to what the pipeline's smallest crop
///   allows. It is a digital zoom done before the picture is scaled down rather than after, so it does the
///   digital zoom's steps itself instead of adding steps of its own.
public struct CameraZoomRange: Sendable, Equatable, Codable {
  public enum Kind: String, Sendable, Equatable, Codable {
    case control
    case sensorCrop = "sensor-crop"
  }

  public let minimum: Int
  public let maximum: Int
  /// The driver's step: every value is `minimum` plus a whole number of steps.
  public let step: Int
  public let kind: Kind

  public init(minimum: Int, maximum: Int, step: Int, kind: Kind = .control) {
    self.minimum = minimum
    self.maximum = maximum
    self.step = max(1, step)
    self.kind = kind
  }

  /// Positions beyond the widest one.
  public var positions: Int { maximum > minimum ? (maximum - minimum) / step : 0 }

  /// "camera control 100..500" or "sensor crop to 2.5x": how probe and status say it.
  public var description: String {
    switch kind {
    case .control: "camera control \(minimum)..\(maximum)"
    case .sensorCrop: "sensor crop to \(Zoom.text(hundredths: maximum))"
    }
  }
}

/// The zoom the buttons step: first the camera's own zoom control where it has one (optical, so the picture
/// keeps every pixel), then the digital zoom, a factor in hundredths (100 = 1.0x, no crop) between 1.0x and
/// the configured maximum and the centred crop of a frame it shows. Zooming out undoes the digital part
/// first. Whole hundredths keep the steps exact (no 1.0x that is 0.9999x after four steps of 0.25).
///
/// A camera that crops on the sensor's side (`CameraZoomRange.Kind.sensorCrop`) takes the digital factor, as
/// far as its range goes, on itself: `controlValue` is that part, and only the rest is cut from the frames.
///
/// The control's range is walked in as many equal steps as the digital zoom has (`maximum` and `step`), or
/// in its own positions when it has fewer, so a press feels the same on either side of the boundary.
public struct Zoom: Sendable, Equatable {
  public let maximum: Int
  public let step: Int
  /// The digital factor, in hundredths.
  public private(set) var factor = 100
  /// The camera's zoom control, when the open camera has one that can be set.
  public private(set) var control: CameraZoomRange?
  /// Steps taken on the control: 0 (widest) to `opticalSteps`.
  public private(set) var opticalStep = 0

  public init(maximum: Int = 400, step: Int = 50) {
    precondition(maximum >= 100 && step > 0, "zoom from 1.0x up, in steps above 0")
    self.maximum = maximum
    self.step = step
  }

  /// Presses from 1.0x to the maximum of the digital zoom (the last one may be shorter).
  public var digitalSteps: Int { (maximum - 100 + step - 1) / step }

  /// Presses across the control's range; 0 without one, and 0 for a sensor crop (it does the digital steps).
  public var opticalSteps: Int {
    guard let control, control.kind == .control else { return 0 }
    return min(control.positions, digitalSteps)
  }

  /// The value the control is set to now; nil without one.
  public var controlValue: Int? {
    guard let control else { return nil }
    switch control.kind {
    case .control: return value(of: control, at: opticalStep)
    case .sensorCrop: return sensorFactor
    }
  }

  /// The part of the digital factor the camera's sensor crop does, in hundredths; 100 without one.
  public var sensorFactor: Int {
    guard let control, control.kind == .sensorCrop else { return 100 }
    return max(100, min(factor, control.maximum))
  }

  /// Whether frames are cut (the digital factor goes beyond what the camera's sensor crop did).
  public var cutsFrames: Bool { factor > sensorFactor }

  /// How the log says what the camera was set to: "camera control 150", "sensor crop 1.5x"; nil without one.
  public var controlSetting: String? {
    guard let control, let value = controlValue else { return nil }
    switch control.kind {
    case .control: return "camera control \(value)"
    case .sensorCrop: return "sensor crop \(Self.text(hundredths: value))"
    }
  }

  /// Anything but the widest, unzoomed picture.
  public var isZoomed: Bool { factor > 100 || opticalStep > 0 }

  /// The camera (re)opened with `range` (nil: no usable zoom control). A camera whose control differs from
  /// the last one's starts at its widest, digital zoom off: a step of one camera means nothing to another,
  /// and the digital part must only ever come after the optical one. The same control keeps its step, and
  /// the service sets it again (a camera that was unplugged has forgotten it).
  public mutating func useControl(_ range: CameraZoomRange?) {
    guard range != control else { return }
    control = range
    opticalStep = 0
    factor = 100
  }

  /// Applies a change; false when it changes nothing (already at the widest or at the maximum).
  public mutating func apply(_ change: ZoomChange) -> Bool {
    let before = (factor, opticalStep)
    switch change {
    case .zoomIn:
      if opticalStep < opticalSteps {
        opticalStep += 1
      } else {
        factor = min(maximum, factor + step)
      }
    case .zoomOut:
      if factor > 100 {
        factor = max(100, factor - step)
      } else {
        opticalStep = max(0, opticalStep - 1)
      }
    case .reset:
      factor = 100
      opticalStep = 0
    }
    return (factor, opticalStep) != before
  }

  /// "2.5x" for the digital factor alone: EXIF's DigitalZoomRatio and the movie's log say it this way.
  public var digitalLabel: String { Self.text(hundredths: factor) }

  /// "2.5x" for 250, to the nearest tenth.
  public static func text(hundredths: Int) -> String {
    let tenths = (hundredths + 5) / 10
    return "\(tenths / 10).\(tenths % 10)x"
  }

  /// How the overlay and the log say it: "2.5x" (digital), "optical 3/6", "optical 6/6 + 2.0x".
  public var label: String {
    guard opticalStep > 0 else { return digitalLabel }
    let optical = "optical \(opticalStep)/\(opticalSteps)"
    return factor > 100 ? "\(optical) + \(digitalLabel)" : optical
  }

  /// How the zoom is done, for `kioskcam status`: "camera control 100..500, then digital to 4.0x" or
  /// "digital to 4.0x".
  public var method: String {
    let digital = "digital to \(Self.text(hundredths: maximum))"
    guard let control else { return digital }
    switch control.kind {
    case .control:
      return opticalSteps > 0 ? "\(control.description) in \(opticalSteps) steps, then \(digital)" : digital
    case .sensorCrop:
      let sensor = "sensor crop to \(Self.text(hundredths: min(maximum, control.maximum)))"
      return control.maximum >= maximum ? sensor : "\(sensor), then \(digital)"
    }
  }

  /// The `index`-th of `opticalSteps` equal steps across the range, on the driver's step grid; the last is
  /// the largest value the grid reaches.
  func value(of range: CameraZoomRange, at index: Int) -> Int {
    let steps = max(1, opticalSteps)
    let positions = range.positions * index / steps + (range.positions * index % steps * 2 >= steps ? 1 : 0)
    return range.minimum + min(positions, range.positions) * range.step
  }

  /// The size a whole frame must be decoded to (an MJPEG frame at its DCT scale) for its crop to cover a
  /// `shownWidth` x `shownHeight` picture: the shown size times the factor left to cut. Decoding only for the
  /// shown size would enlarge the crop where a sharper scale was there to be had.
  public func decodeCover(shownWidth: Int, shownHeight: Int) -> (width: Int, height: Int) {
    let sensor = sensorFactor
    return ((shownWidth * factor + sensor - 1) / sensor, (shownHeight * factor + sensor - 1) / sensor)
  }

  /// The centred part of a `width` x `height` frame shown at this factor: 1/factor of each side (of the factor
  /// left after the camera's sensor crop), on even coordinates and sizes (4:2:x chroma pairs start at even
  /// pixels), never empty.
  public func crop(width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int) {
    guard cutsFrames else { return (0, 0, width, height) }
    return Self.centredCut(width: width, height: height, keeping: sensorFactor, of: factor)
  }

  /// The centred part of a `width` x `height` picture whose sides are `keeping`/`of` of the picture's, on even
  /// coordinates and sizes, never smaller than `minimum`: the frame's crop here, and a sensor crop's rectangle.
  public static func centredCut(
    width: Int, height: Int, keeping part: Int, of whole: Int, minimum: (width: Int, height: Int) = (2, 2)
  ) -> (x: Int, y: Int, width: Int, height: Int) {
    let croppedWidth = max(minimum.width, (width * part / whole) & ~1)
    let croppedHeight = max(minimum.height, (height * part / whole) & ~1)
    return (((width - croppedWidth) / 2) & ~1, ((height - croppedHeight) / 2) & ~1, croppedWidth, croppedHeight)
  }
}
