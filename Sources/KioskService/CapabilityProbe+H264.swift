import Capture
import KioskCore
import LinuxIO
import MediaFiles
import V4L2Codec
import VideoCodec

extension CapabilityProbe {
  /// An H.264 encoder opened at the movie size and the camera's rate (every frame the camera sends is
  /// recorded), as a recording opens it: a V4L2 memory-to-memory encoder where the board has one (the Pi 4's
  /// bcm2835-codec), tried with one picture; otherwise libx264, with the preset that holds that rate here,
  /// measured. A V4L2 encoder that fails its try is named in the evidence, and x264 is used.
  static func h264Encoder(_ config: Config) -> (result: ProbeResult, choice: H264EncoderChoice?) {
    let size = config.movie.size
    let rate = config.camera.frameRate
    let settings = H264Settings(
      width: size.width & ~1, height: size.height & ~1, frameRate: rate,
      bitRate: config.movie.quality.h264BitRate(width: size.width, height: size.height, frameRate: rate),
      threads: H264Settings.threadsBesideTheLoop(threads: CPUUse.threads()))
    let codecs = CodecProbe.codecs()
    var v4l2: String
    if let (codec, raw) = CodecProbe.encoder(for: .h264, from: [.yu12, .nv12], among: codecs) {
      let device = V4L2H264Device(path: codec.path, driver: codec.driver, raw: raw)
      do {
        let header = try V4L2H264Encoder.parameterSets(device, V4L2H264Encoder.settings(device, settings))
        if let configuration = AVCDecoderConfiguration(annexB: header) {
          return (
            .pass(
              .h264Encoder,
              "V4L2 H264 encoder \(codec.path) (\(codec.driver)) from \(raw): \(settings.width)x\(settings.height) at "
                + "\(rate) fps, \(configuration.profileName) profile, level \(configuration.levelName), "
                + "\(settings.bitRate / 1000) kbit/s"),
            .v4l2(device)
          )
        }
        v4l2 = "V4L2 H264 encoder \(codec.path) (\(codec.driver)): its SPS and PPS do not parse, not used"
      } catch {
        v4l2 = "V4L2 H264 encoder \(codec.path) (\(codec.driver)) failed its try, not used: \(error)"
      }
    } else if codecs.isEmpty {
      v4l2 = "no V4L2 codec"
    } else {
      let drivers = Set(codecs.map(\.driver)).sorted().joined(separator: ", ")
      v4l2 = "no V4L2 H264 encoder among \(codecs.count) codec node\(codecs.count == 1 ? "" : "s") (\(drivers))"
    }
    guard H264Encoder.available else {
      return (.fail(.h264Encoder, "\(H264Encoder.identity) does not encode 4:2:0; \(v4l2)"), nil)
    }
    do {
      let choice = try H264PresetChoice.measure(settings)
      var chosen = settings
      chosen.preset = choice.preset
      // The profile and level a recording with that preset gets (ultrafast's is Main, the others' High).
      let encoder = try H264Encoder(chosen)
      guard let configuration = AVCDecoderConfiguration(annexB: encoder.header) else {
        return (.fail(.h264Encoder, "\(H264Encoder.identity): no SPS and PPS in its header"), nil)
      }
      return (
        .pass(
          .h264Encoder,
          "\(H264Encoder.identity): \(settings.width)x\(settings.height) at \(rate) fps on \(settings.threads) "
            + "thread\(settings.threads == 1 ? "" : "s"), \(configuration.profileName) profile, level "
            + "\(configuration.levelName), \(settings.bitRate / 1000) kbit/s, preset \(choice.evidence); \(v4l2)"),
        .x264(choice.preset)
      )
    } catch {
      return (.fail(.h264Encoder, "\(H264Encoder.identity): \(error)"), nil)
    }
  }
}
