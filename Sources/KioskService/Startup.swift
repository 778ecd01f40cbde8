import Buttons
import Camera
import CameraRoll
import Capture
import Display
import FontFile
import Imaging
import KioskCore
import LinuxIO
import Sound
import VideoCodec

/// What the start found and opened, per the gate's roles: each part the configuration wants is probed, and
/// opened when it passes; a missing required capability stops the service here, one line each.
struct Startup {
  var capabilities: CapabilityMonitor
  var settings: KioskSettings
  var camera: (any CaptureStream)?
  var cameraPath: String
  /// Where the camera session opens cameras again: the backend the still camera was found through.
  var cameraSource: any CaptureSource
  var buttons: [PanelLines]
  var flashLamp: PanelLines?
  /// The H.264 encoder the probe chose: a V4L2 one it tried, else x264 at the preset that holds the rate.
  var h264Encoder: H264EncoderChoice?
  /// The microphone the probe opened: movies record from it.
  var microphone: SoundFormat?
  var roll: CameraRoll?
  var display: KMSDisplay?
  var overlay: Overlay?

  init(_ config: Config) throws(ServiceError) {
    let gate = CapabilityGate(config)
    var probed: [ProbeResult] = []
    func wanted(_ capability: Capability) -> Bool { gate.role(of: capability) != .unused }

    // Asked for its listing only when the backend comes to libcamera; then its camera manager is the process's.
    let libcamera = LibcameraCaptureSource()
    if wanted(.movieCamera) { probed.append(CapabilityProbe.movieCamera(config, libcamera: libcamera)) }
    var cameraInfo: CameraInfo?
    cameraPath = config.camera.device
    // A still camera missing at start is looked for again through the configured backend (`auto`: V4L2).
    cameraSource = config.camera.backend == .libcamera ? libcamera as any CaptureSource : V4L2CaptureSource()
    if wanted(.stillCamera) {
      var (result, found) = CapabilityProbe.stillCamera(config, libcamera: libcamera.report())
      if let found {
        cameraInfo = found.v4l2
        cameraPath = found.path
        if case .libcamera = found { cameraSource = libcamera } else { cameraSource = V4L2CaptureSource() }
        do {
          camera = try cameraSource.open(found.path, config.camera)
        } catch {
          result = .fail(.stillCamera, "\(error)")
        }
      }
      probed.append(result)
    }

    buttons = []
    for (role, capability) in [(ButtonRole.shutter, Capability.shutterButton), (.mode, .modeButton)]
    where wanted(capability) {
      let (result, requested) = CapabilityProbe.button(role, config)
      probed.append(result)
      if let requested { buttons.append(requested) }
    }

    if wanted(.flash) {
      let (result, lamp) = CapabilityProbe.flash(config)
      probed.append(result)
      flashLamp = lamp
    }
    if wanted(.zoom) { probed.append(CapabilityProbe.zoom(config, camera: cameraInfo)) }
    if wanted(.h264Encoder) {
      let (result, choice) = CapabilityProbe.h264Encoder(config)
      probed.append(result)
      h264Encoder = choice
    }
    if wanted(.microphone) {
      let (result, found) = CapabilityProbe.microphone(config)
      probed.append(result)
      microphone = found
    }

    if wanted(.cameraRoll) {
      var result = CapabilityProbe.cameraRoll(config)
      if result.passed {
        do {
          roll = try CameraRoll(root: config.roll.path, suffix: config.roll.folderSuffix)
        } catch {
          result = .fail(.cameraRoll, "\(error)")
        }
      }
      probed.append(result)
    }

    if wanted(.display) {
      if config.display.device == "none" {
        probed.append(.fail(.display, "[display] device = none"))
      } else {
        do {
          let card = try KMSDisplay(device: config.display.device, buffers: ScreenSink.displayBuffers(for: config))
          display = card
          probed.append(CapabilityProbe.opened(.success(card)))
        } catch {
          probed.append(CapabilityProbe.opened(.failure(error)))
        }
      }
    }

    if let display {
      do {
        let painter = TextPainter(font: try FontFile.load(config.display.font))
        overlay = Overlay(painter: painter, width: display.width, height: display.height)
      } catch {
        log("overlay off: \(error)")
      }
      if let overlay {
        _ = try? display.present { overlay.drawMessage(["Starting..."], background: Overlay.messageBackground, on: $0) }
      }
    }

    capabilities = CapabilityMonitor(gate: gate, results: probed)
    let verdict = capabilities.verdict
    guard verdict.canRun else {
      if let display { FatalScreen.show(display, overlay, missing: verdict.fatal, for: config.display.missingMessage) }
      throw .unavailable(verdict.fatal)
    }
    // Without its lamp a flash still would wait its lead for a light that never comes: taken at the press.
    settings = KioskSettings(
      gestures: config.buttons.timing, countdown: config.capture.countdown, photoCheck: config.capture.photoCheck,
      movieMaximum: config.movie.maximumDuration,
      flashLead: flashLamp == nil ? nil : config.outputs.flashLead,
      flashForMovies: config.outputs.flashForMovies, cameras: max(1, config.camera.cycle.count),
      reviewIdle: config.review.idle, allowDelete: config.review.allowDelete)
    if let roll { _ = RollRecovery.run(roll) }
    logFindings(config, verdict, gate)
  }

  private func logFindings(_ config: Config, _ verdict: GateVerdict, _ gate: CapabilityGate) {
    // Each optional capability that is missing is said once, here; the feature stays off.
    for missing in verdict.disabled { log("\(missing.capability) off (optional): \(missing.evidence)") }
    // A part wired in the configuration but left out of both lists would be ignored without a word.
    let wired: [(Capability, Bool)] = [
      (.flash, config.outputs.flash != nil),
      (.zoom, config.buttons.zoomIn != nil || config.buttons.zoomOut != nil),
    ]
    for (capability, isWired) in wired where isWired && gate.role(of: capability) == .unused {
      log("\(capability) is wired but in neither [capabilities] list: \(capability.feature) is off")
    }
    let types = verdict.mediaTypes.map(\.rawValue).joined(separator: ", ")
    log("media types: \(types.isEmpty ? "none" : types)")
    if let display {
      log("display \(display.path) \(display.connectorName) \(display.width)x\(display.height)")
      let planes = display.probePlanes(sourceWidth: config.camera.size.width, sourceHeight: config.camera.size.height)
      // Scanning the camera's format out on a plane is not built yet: a plane that would do says so.
      let use = planes.decision == "plane" ? "; the preview still converts on the CPU (no plane path yet)" : ""
      log("display plane: \(planes.decision): \(planes.evidence)\(use)")
    }
  }
}
