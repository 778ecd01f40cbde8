import Imaging
import JPEGCodec
import KioskCore
import LinuxIO
import Preview
import V4L2Codec

extension CapabilityProbe {
  /// What the preview decodes an MJPEG camera's frames with: a V4L2 memory-to-memory decoder that takes MJPEG
  /// (the Pi 4's bcm2835-codec) when the board has one and it decodes a frame of the camera's size faster than
  /// TurboJPEG does here, both timed now on the same frame; else TurboJPEG on the preview's workers. Not a
  /// capability: nothing is off without one. The evidence is logged at start and shown by `kioskcam probe`.
  static func previewDecoder(_ config: Config) -> (choice: FrameDecoderChoice, evidence: String) {
    guard config.camera.format == .mjpeg else {
      return (.turboJPEG, "none: the camera sends \(config.camera.format.fourcc), which is drawn as it comes")
    }
    let codecs = CodecProbe.codecs()
    guard let (codec, _) = CodecProbe.decoder(for: .mjpeg, to: [.yu12], among: codecs) else {
      let found =
        codecs.isEmpty
        ? "no V4L2 codec"
        : "no V4L2 MJPEG decoder among \(codecs.count) codec node\(codecs.count == 1 ? "" : "s") "
          + "(\(Set(codecs.map(\.driver)).sorted().joined(separator: ", ")))"
      return (.turboJPEG, "TurboJPEG on the preview's workers: \(found)")
    }
    let size = config.camera.size
    let hardware = FrameDecoderChoice.v4l2(path: codec.path, coded: .mjpeg)
    do {
      let frame = try trialFrame(width: size.width, height: size.height)
      let theirs = try medianMilliseconds(of: hardware, frame, size)
      let ours = try medianMilliseconds(of: .turboJPEG, frame, size)
      let timing = "a \(size.width)x\(size.height) frame in \(format(theirs)) ms, TurboJPEG \(format(ours)) ms"
      if theirs < ours { return (hardware, "V4L2 MJPEG decoder \(codec.path) (\(codec.driver)): \(timing): used") }
      return (.turboJPEG, "TurboJPEG on the preview's workers: V4L2 MJPEG decoder \(codec.path) (\(codec.driver)) "
        + "is slower, \(timing)")
    } catch {
      return (.turboJPEG, "TurboJPEG on the preview's workers: V4L2 MJPEG decoder \(codec.path) (\(codec.driver)) "
        + "failed its try: \(error)")
    }
  }

  /// A camera-like 4:2:2 JPEG: smooth ramps, which is how a webcam's frames compress.
  static func trialFrame(width: Int, height: Int) throws -> [UInt8] {
    let chromaWidth = (width + 1) / 2
    var luma = [UInt8](repeating: 0, count: width * height)
    var cb = [UInt8](repeating: 0, count: chromaWidth * height)
    var cr = cb
    for y in 0..<height {
      for x in 0..<width { luma[y * width + x] = UInt8(truncatingIfNeeded: 16 + (x + y) * 200 / (width + height)) }
      for x in 0..<chromaWidth {
        cb[y * chromaWidth + x] = UInt8(truncatingIfNeeded: 64 + y * 128 / height)
        cr[y * chromaWidth + x] = UInt8(truncatingIfNeeded: 192 - x * 128 / chromaWidth)
      }
    }
    return try JPEGEncoder.encode(
      PlanarYCbCr(width: width, height: height, chromaWidth: chromaWidth, chromaHeight: height, luma: luma, cb: cb, cr: cr),
      quality: 85)
  }

  /// The median of five decodes, in wall time (a hardware decoder's time is not this process's CPU), after one
  /// that sets the decoder up.
  static func medianMilliseconds(of choice: FrameDecoderChoice, _ frame: [UInt8], _ size: Size) throws -> Double {
    let decoder = try choice.make()
    var times: [Double] = []
    for run in 0..<6 {
      let start = monotonicNanoseconds()
      _ = try frame.withUnsafeBytes { try decoder.decode($0, covering: size.width, size.height) }
      if run > 0 { times.append(Double(monotonicNanoseconds() - start) / 1e6) }
    }
    return times.sorted()[times.count / 2]
  }

  private static func format(_ milliseconds: Double) -> String { "\((milliseconds * 10).rounded() / 10)" }
}
