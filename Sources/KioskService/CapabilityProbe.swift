import Buttons
import Camera
import Display
import KioskCore
import LibcameraCamera
import LinuxIO
import MediaFiles
import Sound
import V4L2Codec
import VideoCodec

/// Where the probe found a camera: a V4L2 node as its probe described it, or a libcamera camera by its id.
enum FoundCamera {
  case v4l2(CameraInfo)
  case libcamera(id: String)

  /// What the camera session opens: the node's path, or libcamera's id.
  var path: String {
    switch self {
    case .v4l2(let info): info.path
    case .libcamera(let id): id
    }
  }

  /// The V4L2 node's description (its zoom control); nil for a libcamera camera.
  var v4l2: CameraInfo? {
    if case .v4l2(let info) = self { info } else { nil }
  }
}

/// The adapters' side of the capability gate: each probe looks at the hardware and says in words what it found.
///
/// These probes only look (and request a button line just long enough to know it can be had); `KioskService`
/// then opens what passed, and an open that fails turns the verdict into a failure with the open's reason.
enum CapabilityProbe {
  /// Formats the service turns into stills and the preview (MJPEG decoded on the preview's workers).
  static let decodedFormats: [PixelFormat] = [.yuyv, .nv12, .mjpeg]

  /// The configured camera (or, for `auto`, the first that qualifies) for stills at `[camera] size`.
  /// `libcamera`: the listing to judge libcamera's cameras by, asked for only when the backend comes to it.
  static func stillCamera(_ config: Config, libcamera: @autoclosure () -> LibcameraReport = LibcameraReport()) -> (
    result: ProbeResult, camera: FoundCamera?
  ) {
    camera(.stillCamera, config, size: config.camera.size, rate: nil, libcamera: libcamera())
  }

  /// The camera for movies: `[movie] size` at `[movie] frame-rate`, as the driver advertises it, then as it
  /// delivers (CapabilityProbe+Rate.swift). `libcamera`: the source whose camera manager lists libcamera's
  /// cameras and opens the one to measure (libcamera allows one manager a process); asked only when the
  /// backend comes to libcamera.
  static func movieCamera(
    _ config: Config, measure: Bool = true, libcamera: LibcameraCaptureSource = LibcameraCaptureSource()
  ) -> ProbeResult {
    let (advertised, found) = camera(
      .movieCamera, config, size: config.movie.size, rate: config.movie.frameRate, libcamera: libcamera.report())
    guard advertised.passed, let found else { return advertised }
    switch found {
    case .v4l2(let info):
      guard measure else { return advertised }
      let name = "\(info.path) (\(info.driver)): \(config.camera.format.fourcc) \(config.movie.size)"
      return measured(advertised, name: name, config) { () throws(CameraError) in
        try CameraStream(
          path: info.path, format: config.camera.format, size: config.movie.size, frameRate: config.camera.frameRate)
      }
    case .libcamera(let id):
      guard measure else { return rateUnchecked(advertised) }
      var settings = config.camera
      settings.size = config.movie.size
      return measured(advertised, name: advertised.evidence, config) { () throws(CameraError) in
        try libcamera.open(id, settings)
      }
    }
  }

  /// The backend's verdict: `[camera] backend`, and for `auto` V4L2 first (webcams stay on the path they
  /// always took), then libcamera, with both reasons when neither has a camera.
  private static func camera(
    _ capability: Capability, _ config: Config, size: Size, rate: Int?,
    libcamera report: @autoclosure () -> LibcameraReport
  ) -> (result: ProbeResult, camera: FoundCamera?) {
    func libcamera() -> (result: ProbeResult, camera: FoundCamera?) {
      let (result, id) = libcameraCamera(capability, config, size: size, report: report())
      return (result, id.map { .libcamera(id: $0) })
    }
    func v4l2() -> (result: ProbeResult, camera: FoundCamera?) {
      let (result, info) = v4l2Camera(capability, config, size: size, rate: rate)
      return (result, info.map { .v4l2($0) })
    }
    switch config.camera.backend {
    case .v4l2:
      return v4l2()
    case .libcamera:
      return libcamera()
    case .auto:
      let first = v4l2()
      guard !first.result.passed else { return first }
      let second = libcamera()
      guard !second.result.passed else { return second }
      return (.fail(capability, "V4L2: \(first.result.evidence); \(second.result.evidence)"), nil)
    }
  }

  private static func v4l2Camera(_ capability: Capability, _ config: Config, size: Size, rate: Int?) -> (
    result: ProbeResult, camera: CameraInfo?
  ) {
    let format = config.camera.format
    guard decodedFormats.contains(format) else {
      return (.fail(capability, "[camera] format \(format.rawValue) is not decoded"), nil)
    }
    // Only the wanted format's sizes and rates, and no node past the first that passes (CameraProbe).
    let candidates: AnySequence<Result<CameraInfo, CameraError>>
    if config.camera.device == "auto" {
      candidates = AnySequence(CameraProbe.captureDevices(sizesOf: format.fourcc).lazy.map { .success($0) })
    } else {
      do {
        candidates = AnySequence([.success(try CameraProbe.describe(config.camera.device, sizesOf: format.fourcc))])
      } catch {
        candidates = AnySequence([.failure(error)])
      }
    }
    var reasons: [String] = []
    for candidate in candidates {
      switch candidate {
      case .failure(let error):
        reasons.append("\(error)")
      case .success(let info):
        switch judge(info, format: format, size: size, rate: rate) {
        case .success(let evidence): return (.pass(capability, evidence), info)
        case .failure(let reason): reasons.append(reason.text)
        }
      }
    }
    if reasons.isEmpty { return (.fail(capability, "no V4L2 video capture device (probed /dev/video*)"), nil) }
    return (.fail(capability, reasons.joined(separator: "; ")), nil)
  }

  private struct Reason: Error { let text: String }

  private static func judge(_ info: CameraInfo, format: PixelFormat, size: Size, rate: Int?) -> Result<String, Reason> {
    let name = "\(info.path) (\(info.driver))"
    guard info.capture, info.streaming else {
      return .failure(Reason(text: "\(name): not a streaming video capture device"))
    }
    // libv4l2 converts emulated formats on the fly; the stream reads them like native ones.
    guard let offered = info.formats.first(where: { $0.fourcc == format.fourcc }) else {
      let fourccs = info.formats.prefix(8).map(\.fourcc).joined(separator: " ")
      return .failure(Reason(text: "\(name): no \(format.fourcc) (offers \(fourccs)\(info.formats.count > 8 ? " ..." : ""))"))
    }
    /// The advertised rates at the wanted size, nil when the size is not offered.
    let rates: [Double]?
    if offered.stepwiseSizes, let low = offered.sizes.first, let high = offered.sizes.last {
      let fits = (low.width...high.width).contains(size.width) && (low.height...high.height).contains(size.height)
      // A range advertises rates only at its ends; the larger end's, the slower, are the safe bound inside it.
      rates = fits ? high.frameRates.map(\.framesPerSecond) : nil
    } else {
      rates = offered.sizes.first { $0.width == size.width && $0.height == size.height }?.frameRates.map(\.framesPerSecond)
    }
    guard let rates else {
      let sizes = offered.sizes.map { "\($0.width)x\($0.height)" }.joined(separator: " ")
      return .failure(Reason(text: "\(name): \(format.fourcc) not at \(size) (offers \(sizes))"))
    }
    guard let rate else { return .success("\(name): capture, streaming, \(format.fourcc) \(size)") }
    guard let fastest = rates.max() else {
      return .failure(Reason(text: "\(name): \(format.fourcc) \(size) advertises no frame rate, \(rate) fps wanted"))
    }
    guard fastest + 0.01 >= Double(rate) else {
      return .failure(Reason(text: "\(name): \(format.fourcc) \(size) at most \(rateText(fastest)) fps advertised, \(rate) fps wanted"))
    }
    return .success("\(name): \(format.fourcc) \(size) up to \(rateText(fastest)) fps advertised, \(rate) fps wanted")
  }

  /// Whether a display is there, without taking it: `kioskcam probe` must not blank a running kiosk's screen.
  static func display(_ config: Config) -> ProbeResult {
    let device = config.display.device
    guard device != "none" else { return .fail(.display, "[display] device = none") }
    let cards: [DisplayCardInfo]
    if device == "auto" {
      cards = DisplayProbe.list()
      if cards.isEmpty { return .fail(.display, "no DRM card (probed /dev/dri/card*)") }
    } else {
      do {
        cards = [try DisplayProbe.describe(device)]
      } catch {
        return .fail(.display, "\(error)")
      }
    }
    for card in cards {
      if let connector = card.connectors.first(where: { $0.status == "connected" && !$0.modes.isEmpty }) {
        let mode = connector.modes.first(where: \.preferred) ?? connector.modes[0]
        return .pass(.display, "\(card.path) (\(card.driver)): \(connector.name) connected, \(mode.width)x\(mode.height)")
      }
    }
    let probed = cards.map { "\($0.path) (\($0.driver))" }.joined(separator: ", ")
    return .fail(.display, "no connected connector with a mode on \(probed)")
  }

  /// The result for a display the service opened (or failed to).
  static func opened(_ display: Result<KMSDisplay, DisplayError>) -> ProbeResult {
    switch display {
    case .success(let output): .pass(.display, "\(output.path): \(output.connectorName) \(output.width)x\(output.height)")
    case .failure(let error): .fail(.display, "\(error)")
    }
  }

  /// Requests the role's line; the caller keeps the lines (the service) or drops them at once (the probe).
  static func button(_ role: ButtonRole, _ config: Config) -> (result: ProbeResult, lines: PanelLines?) {
    let capability: Capability = role == .shutter ? .shutterButton : .modeButton
    let reference = role == .shutter ? config.buttons.shutter : config.buttons.mode
    guard let reference else { return (.fail(capability, "[buttons] \(role.rawValue) = none"), nil) }
    do {
      let lines = try PanelLines(
        chip: config.buttons.chip, lines: [(role, reference)],
        wiring: ButtonWiring(activeLow: config.buttons.activeLow, bias: config.buttons.bias),
        kernelDebounce: config.buttons.minimumPulse)
      return (.pass(capability, lines.descriptions.joined(separator: "; ") + ": requested"), lines)
    } catch {
      return (.fail(capability, "\(error)"), nil)
    }
  }

  /// Requests the flash lamp's line as an output, kept by the service (the probe drops it at once).
  static func flash(_ config: Config) -> (result: ProbeResult, lamp: PanelLines?) {
    guard let reference = config.outputs.flash else { return (.fail(.flash, "[outputs] flash = none"), nil) }
    do {
      let lamp = try PanelLines(
        chip: config.buttons.chip, lines: [], wiring: ButtonWiring(activeLow: false, bias: .asIs),
        outputs: [(.flash, reference)], outputsActiveLow: config.outputs.activeLow)
      return (.pass(.flash, lamp.lampDescriptions.joined(separator: "; ") + ": requested as an output"), lamp)
    } catch {
      return (.fail(.flash, "\(error)"), nil)
    }
  }

  /// Something to zoom: a digital zoom above 1.0x (every format the service streams is cropped, MJPEG too),
  /// walked after the camera's own zoom control where `camera` has one.
  static func zoom(_ config: Config, camera: CameraInfo?) -> ProbeResult {
    var zoom = Zoom(maximum: config.capture.zoomMaximum, step: config.capture.zoomStep)
    guard zoom.maximum > 100 else { return .fail(.zoom, "[capture] zoom-maximum = 1.0: nothing to zoom") }
    zoom.useControl(camera?.zoomControl)
    return .pass(.zoom, (camera.map { "\($0.path): " } ?? "") + zoom.method)
  }

  /// A capture PCM opened as a recording opens it (S16_LE, the rate nearest 48 kHz, mono where it has it,
  /// CLOCK_MONOTONIC timestamps) and closed again, and the AAC encoder opened at what it gave.
  static func microphone(_ config: Config) -> (result: ProbeResult, found: SoundFormat?) {
    let name: String?
    switch config.movie.audio {
    case .none: return (.fail(.microphone, "[movie] audio = none"), nil)
    case .auto: name = nil
    case .device(let device): name = device
    }
    switch SoundProbe.find(name) {
    case .failure(let error):
      return (.fail(.microphone, "\(SoundProbe.identity): \(error)"), nil)
    case .success(let format):
      do {
        let encoder = try AACEncoder(sampleRate: format.sampleRate, channels: format.channels)
        return (.pass(.microphone, "\(format); \(AACEncoder.identity), \(encoder.bitRate / 1000) kbit/s"), format)
      } catch {
        return (.fail(.microphone, "\(format); \(AACEncoder.identity): \(error)"), nil)
      }
    }
  }

  static func cameraRoll(_ config: Config) -> ProbeResult {
    RollStorageCheck.evaluate(rollFacts(config), roll: config.roll)
  }

  /// What the roll's storage is now: where it is mounted, whether it is writable, and its free space.
  static func rollFacts(_ config: Config) -> RollStorageFacts {
    let path = config.roll.path
    return RollStorageFacts(
      path: path, isDirectory: FileStatus.isDirectory(path), writable: FileStatus.isWritable(path),
      availableBytes: (try? FileSystemSpace(path: path))?.availableBytes,
      device: FileStatus.fileSystemDevice(path), parentDevice: FileStatus.fileSystemDevice(path + "/.."),
      rootDevice: FileStatus.fileSystemDevice("/"),
      expectedDevice: RollStorageCheck.expectedDevicePath(config.roll.mount).flatMap(FileStatus.blockDevice))
  }

  /// Every capability the configuration wants, probed without holding on to anything.
  static func all(_ config: Config) -> [ProbeResult] {
    let gate = CapabilityGate(config)
    var results: [ProbeResult] = []
    for capability in Capability.allCases where gate.role(of: capability) != .unused {
      switch capability {
      case .stillCamera: results.append(stillCamera(config).result)
      case .movieCamera: results.append(movieCamera(config))
      case .display: results.append(display(config))
      case .shutterButton: results.append(button(.shutter, config).result)
      case .modeButton: results.append(button(.mode, config).result)
      case .cameraRoll: results.append(cameraRoll(config))
      case .flash: results.append(flash(config).result)
      case .zoom: results.append(zoom(config, camera: stillCamera(config).camera?.v4l2))
      case .h264Encoder: results.append(h264Encoder(config).result)
      case .microphone: results.append(microphone(config).result)
      }
    }
    return results
  }
}
