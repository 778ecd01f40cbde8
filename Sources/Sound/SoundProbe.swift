#if canImport(Glibc)
  import Glibc
#endif
import CALSA

/// Finding a microphone: the first card with a capture PCM, or one by name, opened once as a recording
/// would open it and closed again.
public enum SoundProbe {
  /// The capture PCMs of every card, in card and device order, as `plughw:CARD=<id>,DEV=<n>` (plughw: a
  /// microphone that has only S32 or 44.1 kHz is converted by libasound into what the movie takes).
  public static func capturePCMs() -> [(name: String, card: String)] {
    var found: [(String, String)] = []
    var card: Int32 = -1
    while snd_card_next(&card) == 0, card >= 0 {
      var ctl: OpaquePointer?
      guard snd_ctl_open(&ctl, "hw:\(card)", 0) == 0, let ctl else { continue }
      defer { snd_ctl_close(ctl) }
      var cardInfo: OpaquePointer?
      guard snd_ctl_card_info_malloc(&cardInfo) == 0 else { continue }
      defer { snd_ctl_card_info_free(cardInfo) }
      guard snd_ctl_card_info(ctl, cardInfo) == 0 else { continue }
      let id = String(cString: snd_ctl_card_info_get_id(cardInfo))
      let name = String(cString: snd_ctl_card_info_get_name(cardInfo))
      var pcmInfo: OpaquePointer?
      guard snd_pcm_info_malloc(&pcmInfo) == 0 else { continue }
      defer { snd_pcm_info_free(pcmInfo) }
      var device: Int32 = -1
      while snd_ctl_pcm_next_device(ctl, &device) == 0, device >= 0 {
        snd_pcm_info_set_device(pcmInfo, UInt32(device))
        snd_pcm_info_set_subdevice(pcmInfo, 0)
        snd_pcm_info_set_stream(pcmInfo, SND_PCM_STREAM_CAPTURE)
        if snd_ctl_pcm_info(ctl, pcmInfo) == 0 { found.append(("plughw:CARD=\(id),DEV=\(device)", name)) }
      }
    }
    return found
  }

  /// The PCM `[movie] audio` names (nil: `auto`, the first capture PCM), opened and closed: its format, or
  /// why there is none.
  public static func find(_ name: String?) -> Result<SoundFormat, SoundError> {
    let candidates: [String]
    if let name {
      candidates = [name]
    } else {
      candidates = capturePCMs().map(\.name)
      guard !candidates.isEmpty else { return .failure(.absent("no sound card with a capture device")) }
    }
    var firstError: SoundError?
    for candidate in candidates {
      do {
        return .success(try PCMDevice(candidate).format)
      } catch {
        firstError = firstError ?? error
      }
    }
    return .failure(firstError!)
  }

  /// "libasound 1.2.8".
  public static var identity: String { "libasound \(String(cString: snd_asoundlib_version()))" }
}
