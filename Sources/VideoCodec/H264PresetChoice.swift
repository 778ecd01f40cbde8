#if canImport(Glibc)
  import Glibc
#endif
import Imaging

/// Which x264 preset holds the camera's rate on this board, measured: a few pictures of a moving test scene
/// encoded at the movie's size with each preset, fastest first, and the slowest one whose time a picture
/// leaves `headroom` of the frame interval free is taken. A board too slow for even the fastest records with
/// it anyway, and the frames it cannot take are counted as dropped.
public struct H264PresetChoice: Sendable, Equatable {
  public let preset: H264Preset
  /// Milliseconds a picture took with each preset measured, fastest first.
  public let milliseconds: [(H264Preset, Double)]
  public let holdsRate: Bool

  public static func == (lhs: Self, rhs: Self) -> Bool { lhs.preset == rhs.preset && lhs.holdsRate == rhs.holdsRate }

  /// "superfast (12.1 ms a picture of 33.3; ultrafast+cabac 6.0, superfast 12.1, veryfast 19.8)".
  public var evidence: String {
    let figures = milliseconds.map { "\($0.0.rawValue) \(Self.figure($0.1))" }.joined(separator: ", ")
    return "\(preset.rawValue)\(holdsRate ? "" : ", too slow for the rate") (ms a picture: \(figures))"
  }

  static func figure(_ value: Double) -> String { "\((value * 10).rounded() / 10)" }

  /// Pictures encoded with each preset; the first few are not timed (x264's lookahead and threads start).
  public static func measure(
    _ settings: H264Settings, headroom: Double = 0.7, pictures: Int = 8
  ) throws(CodecError) -> H264PresetChoice {
    let interval = 1000.0 / Double(settings.frameRate)
    var measured: [(H264Preset, Double)] = []
    var chosen = H264Preset.ultrafast
    var holds = false
    for preset in H264Preset.allCases.reversed() {
      var trial = settings
      trial.preset = preset
      let encoder = try H264Encoder(trial)
      let warmup = 2
      var started = 0.0
      for number in 0..<(warmup + pictures) {
        if number == warmup { started = now() }
        let picture = try H264Picture(width: settings.width, height: settings.height)
        scene(picture.target, number)
        _ = try encoder.encode(picture, timestamp: Int64(number) * 1_000_000_000 / Int64(settings.frameRate))
      }
      _ = try encoder.finish()
      let each = (now() - started) / Double(pictures)
      measured.append((preset, each))
      guard each <= interval * headroom else { break }
      chosen = preset
      holds = true
    }
    return H264PresetChoice(preset: chosen, milliseconds: measured, holdsRate: holds)
  }

  /// Bars that move a little each picture, with a textured band: something like a camera's work for x264.
  static func scene(_ target: I420Target, _ number: Int) {
    for y in 0..<target.height {
      let row = target.luma + y * target.lumaStride
      for x in 0..<target.width {
        let bar = ((x + number * 3) * 8 / max(1, target.width)) & 7
        row[x] = y < target.height * 2 / 3 ? UInt8(16 + bar * 27) : UInt8(truncatingIfNeeded: (x * 7 + y * 13 + number * 5) & 0xFF)
      }
    }
    for y in 0..<target.chromaHeight {
      for x in 0..<target.chromaWidth {
        target.cb[y * target.chromaStride + x] = UInt8(truncatingIfNeeded: 128 + ((x + number) & 63) - 32)
        target.cr[y * target.chromaStride + x] = UInt8(truncatingIfNeeded: 128 + ((y - number) & 63) - 32)
      }
    }
  }

  private static func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) * 1000 + Double(time.tv_nsec) / 1_000_000
  }
}
