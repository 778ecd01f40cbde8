#if canImport(Glibc)
  import Glibc
#endif
import CALSA

/// What went wrong with a microphone, in the kiosk's terms, with the libasound call and its message.
public enum SoundError: Error, Sendable, CustomStringConvertible {
  /// No capture PCM on any card, or none by that name.
  case absent(String)
  /// Another program holds it.
  case busy(String)
  /// It opened but takes nothing a movie can use.
  case unusable(String)
  /// It went away while capturing (a USB microphone pulled).
  case unplugged(String)
  case io(String)

  public var description: String {
    switch self {
    case .absent(let what), .busy(let what), .unusable(let what), .unplugged(let what), .io(let what): what
    }
  }

  static func from(_ call: String, _ status: Int32, device: String) -> SoundError {
    let text = "\(device): \(call): \(String(cString: snd_strerror(status)))"
    switch -status {
    case ENOENT, ENXIO: return .absent(text)
    case EBUSY: return .busy(text)
    case ENODEV, ESTRPIPE: return .unplugged(text)
    case EINVAL: return .unusable(text)
    default: return .io(text)
    }
  }
}

/// How a capture PCM was opened: what the `microphone` evidence and the record say.
public struct SoundFormat: Sendable, Equatable, CustomStringConvertible {
  /// The PCM name it was opened by (`plughw:CARD=Loopback,DEV=0`).
  public let device: String
  /// The card's name as ALSA gives it (`Loopback`), empty when libasound does not say.
  public let card: String
  public let sampleRate: Int
  public let channels: Int
  /// Frames between two wake-ups of the capture thread.
  public let periodFrames: Int

  /// "plughw:CARD=Loopback,DEV=0 (Loopback): S16_LE, 48000 Hz, mono, periods of 1024 frames, CLOCK_MONOTONIC timestamps".
  public var description: String {
    "\(device)\(card.isEmpty ? "" : " (\(card))"): S16_LE, \(sampleRate) Hz, "
      + "\(channels == 1 ? "mono" : channels == 2 ? "stereo" : "\(channels) channels"), periods of \(periodFrames) frames, "
      + "CLOCK_MONOTONIC timestamps"
  }
}

/// One open capture PCM, interleaved signed 16-bit, non-blocking, stamped on CLOCK_MONOTONIC (the clock of
/// the V4L2 buffers, so sound and picture share one timeline). Closed in `deinit`.
///
/// Unchecked Sendable: opened on one thread and then used only by the capture thread it is handed to.
final class PCMDevice: @unchecked Sendable {
  let handle: OpaquePointer
  let format: SoundFormat

  /// The rate asked for: what AAC in MP4 is most often, and what snd-aloop and USB microphones give.
  static let preferredRate: UInt32 = 48_000

  init(_ name: String) throws(SoundError) {
    var pcm: OpaquePointer?
    var status = snd_pcm_open(&pcm, name, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)
    guard status >= 0, let pcm else { throw .from("snd_pcm_open", status, device: name) }
    handle = pcm
    func check(_ call: String, _ status: Int32) throws(SoundError) {
      guard status >= 0 else {
        snd_pcm_close(pcm)
        throw .from(call, status, device: name)
      }
    }

    var hw: OpaquePointer?
    try check("snd_pcm_hw_params_malloc", snd_pcm_hw_params_malloc(&hw))
    defer { snd_pcm_hw_params_free(hw) }
    try check("snd_pcm_hw_params_any", snd_pcm_hw_params_any(pcm, hw))
    try check("snd_pcm_hw_params_set_access", snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED))
    try check("snd_pcm_hw_params_set_format S16_LE", snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_S16_LE))
    // Mono where the device has it (most microphones), else stereo: AAC takes either, and a snd-aloop cable
    // makes its other end match whatever this end opened.
    var channels: UInt32 = 1
    status = snd_pcm_hw_params_set_channels_near(pcm, hw, &channels)
    try check("snd_pcm_hw_params_set_channels_near", status)
    guard channels <= 2 else {
      snd_pcm_close(pcm)
      throw .unusable("\(name): \(channels) channels at the least; a movie takes mono or stereo")
    }
    var rate = Self.preferredRate
    var direction: Int32 = 0
    try check("snd_pcm_hw_params_set_rate_near", snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, &direction))
    // About 20 ms a period (an AAC frame), and two seconds of buffer: the capture thread shares the cores
    // with the H.264 encoder, and on the loaded emulated board half a second of buffer overran (beeps lost).
    var period = snd_pcm_uframes_t(1024)
    try check("snd_pcm_hw_params_set_period_size_near", snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, &direction))
    var bufferTime: UInt32 = 2_000_000
    try check("snd_pcm_hw_params_set_buffer_time_near", snd_pcm_hw_params_set_buffer_time_near(pcm, hw, &bufferTime, &direction))
    try check("snd_pcm_hw_params", snd_pcm_hw_params(pcm, hw))
    _ = snd_pcm_hw_params_get_period_size(hw, &period, &direction)

    var sw: OpaquePointer?
    try check("snd_pcm_sw_params_malloc", snd_pcm_sw_params_malloc(&sw))
    defer { snd_pcm_sw_params_free(sw) }
    try check("snd_pcm_sw_params_current", snd_pcm_sw_params_current(pcm, sw))
    // High-resolution timestamps at each period, on the camera's clock.
    try check("snd_pcm_sw_params_set_tstamp_mode", snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE))
    try check(
      "snd_pcm_sw_params_set_tstamp_type MONOTONIC",
      snd_pcm_sw_params_set_tstamp_type(pcm, sw, snd_pcm_tstamp_type_t(SND_PCM_TSTAMP_TYPE_MONOTONIC.rawValue)))
    try check("snd_pcm_sw_params_set_avail_min", snd_pcm_sw_params_set_avail_min(pcm, sw, period))
    try check("snd_pcm_sw_params", snd_pcm_sw_params(pcm, sw))

    var cardName = ""
    var info: OpaquePointer?
    if snd_pcm_info_malloc(&info) == 0 {
      if snd_pcm_info(pcm, info) == 0 {
        let card = snd_pcm_info_get_card(info)
        var text: UnsafeMutablePointer<CChar>?
        if card >= 0, snd_card_get_name(card, &text) == 0, let text {
          cardName = String(cString: text)
          free(text)
        }
      }
      snd_pcm_info_free(info)
    }
    format = SoundFormat(
      device: name, card: cardName, sampleRate: Int(rate), channels: Int(channels), periodFrames: Int(period))
  }

  private var open = true

  /// Closes it now, so that the next recording can open it while this object is still referenced.
  func close() {
    guard open else { return }
    open = false
    snd_pcm_close(handle)
  }

  deinit { close() }

  func start() throws(SoundError) {
    let status = snd_pcm_start(handle)
    guard status >= 0 else { throw .from("snd_pcm_start", status, device: format.device) }
  }

  /// Frames read into `buffer` (interleaved), 0 when none are there yet; after an overrun the stream is
  /// restarted and 0 returned (the frames lost show as a jump in the next timestamp).
  func read(into buffer: inout [Int16], frames: Int) throws(SoundError) -> Int {
    let got = buffer.withUnsafeMutableBytes { snd_pcm_readi(handle, $0.baseAddress, snd_pcm_uframes_t(frames)) }
    if got >= 0 { return got }
    let status = Int32(got)
    if status == -EAGAIN { return 0 }
    if status == -EPIPE {
      // An overrun: the thread fell behind by more than the buffer.
      let prepared = snd_pcm_prepare(handle)
      guard prepared >= 0 else { throw .from("snd_pcm_prepare after an overrun", prepared, device: format.device) }
      try start()
      return 0
    }
    throw .from("snd_pcm_readi", status, device: format.device)
  }

  /// Waits up to `milliseconds` for a period; false when the time ran out.
  func wait(milliseconds: Int32) throws(SoundError) -> Bool {
    let status = snd_pcm_wait(handle, milliseconds)
    if status == -EPIPE { return true }  // the read that follows sees the overrun and restarts
    guard status >= 0 else { throw .from("snd_pcm_wait", status, device: format.device) }
    return status > 0
  }

  /// When the next frame to read was captured, nanoseconds on CLOCK_MONOTONIC: the driver's timestamp of
  /// its last period, less the frames already there that this reader has not taken yet.
  func nextFrameTime() -> Int64? {
    var available = snd_pcm_uframes_t(0)
    var stamp = timespec()
    guard snd_pcm_htimestamp(handle, &available, &stamp) == 0, stamp.tv_sec != 0 || stamp.tv_nsec != 0 else { return nil }
    let now = Int64(stamp.tv_sec) * 1_000_000_000 + Int64(stamp.tv_nsec)
    return now - Int64(available) * 1_000_000_000 / Int64(format.sampleRate)
  }
}
