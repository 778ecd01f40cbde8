/// Where a movie's sound comes from (`[movie] audio`).
public enum MovieAudio: Sendable, Equatable, CustomStringConvertible {
  /// The first ALSA card with a capture PCM.
  case auto
  /// No sound, and the `microphone` capability is not fitted.
  case none
  /// An ALSA PCM by the name libasound opens it by (`hw:1,0`, `plughw:CARD=Loopback,DEV=1`, `default`).
  case device(String)

  /// A PCM name is what `snd_pcm_open` takes: no spaces or control characters, and a path is not one.
  public init?(parsing value: String) {
    switch value.lowercased() {
    case "auto": self = .auto
    case "none": self = .none
    default:
      let allowed = value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") }
      guard allowed, !value.isEmpty, !value.hasPrefix("/"), value.utf8.count <= 64 else { return nil }
      self = .device(value)
    }
  }

  public var description: String {
    switch self {
    case .auto: "auto"
    case .none: "none"
    case .device(let name): name
    }
  }
}
