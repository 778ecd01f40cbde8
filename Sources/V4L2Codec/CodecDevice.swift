#if canImport(Glibc)
  import Glibc
#endif
import CV4L2
import LinuxIO

public struct CodecDeviceError: Error, Sendable, CustomStringConvertible {
  public let description: String
  init(_ device: String, _ what: String) { description = "\(device): \(what)" }
  init(_ device: String, _ error: SystemCallError) { description = "\(device): \(error)" }
}

/// The codes the codecs speak (`FourCC` is LinuxIO's).
extension FourCC {
  public static let yu12 = FourCC(code: CV4L2_PIX_FMT_YUV420())
  public static let nv12 = FourCC(code: CV4L2_PIX_FMT_NV12())
  public static let h264 = FourCC(code: CV4L2_PIX_FMT_H264())
  public static let fwht = FourCC(code: CV4L2_PIX_FMT_FWHT())
  public static let mjpeg = FourCC(code: CV4L2_PIX_FMT_MJPEG())
}

/// One memory-to-memory codec node, opened non-blocking: its two queues are driven with poll(2), so a codec
/// that stops answering is a timeout and an error, never a thread stuck in DQBUF.
///
/// Only the multi-planar API: it is what the Pi's bcm2835-codec speaks (and vicodec with `multiplanar=1`),
/// so the code the board tests is the code a Pi runs.
final class CodecDevice {
  let path: String
  let driver: String
  let card: String
  private let fd: OwnedFD

  init(path: String) throws(CodecDeviceError) {
    self.path = path
    let opened: OwnedFD
    do {
      opened = try OwnedFD(opening: path, flags: O_RDWR | O_NONBLOCK)
    } catch {
      throw CodecDeviceError(path, error)
    }
    let raw = opened.raw
    fd = opened
    var capability = v4l2_capability()
    let status = withUnsafeMutableBytes(of: &capability) { ioctl(raw, CV4L2_VIDIOC_QUERYCAP(), $0.baseAddress!) }
    guard status == 0 else { throw CodecDeviceError(path, SystemCallError("VIDIOC_QUERYCAP", Errno.current)) }
    let caps =
      capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? capability.device_caps : capability.capabilities
    driver = withUnsafeBytes(of: capability.driver) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    card = withUnsafeBytes(of: capability.card) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    guard caps & UInt32(V4L2_CAP_VIDEO_M2M_MPLANE) != 0, caps & UInt32(V4L2_CAP_STREAMING) != 0 else {
      throw CodecDeviceError(path, "not a multi-planar memory-to-memory device (\(driver))")
    }
  }

  var raw: CInt { fd.raw }

  /// One ioctl, retried on EINTR.
  func control<Argument>(_ name: String, _ request: UInt, _ argument: inout Argument) throws(CodecDeviceError) {
    if let error = attempt(request, &argument) { throw CodecDeviceError(path, SystemCallError(name, error)) }
  }

  /// One ioctl whose failure the caller reads (EAGAIN from a queue with nothing ready, EPIPE after the last
  /// buffer, EINVAL at the end of an enumeration).
  func attempt<Argument>(_ request: UInt, _ argument: inout Argument) -> Errno? {
    while true {
      let status = withUnsafeMutableBytes(of: &argument) { ioctl(fd.raw, request, $0.baseAddress!) }
      if status == 0 { return nil }
      let error = Errno.current
      if error != .interrupted { return error }
    }
  }

  /// The formats a queue offers, in the driver's order.
  func formats(_ type: v4l2_buf_type) -> [FourCC] {
    var found: [FourCC] = []
    for index in 0..<64 {
      var description = v4l2_fmtdesc()
      description.index = UInt32(index)
      description.type = type.rawValue
      guard attempt(CV4L2_VIDIOC_ENUM_FMT(), &description) == nil else { break }
      found.append(FourCC(code: description.pixelformat))
    }
    return found
  }

  /// Sets a control the driver has; `false` when it has none of that id (a codec need not have them all).
  @discardableResult
  func setControl(_ id: UInt32, _ value: Int32) -> Bool {
    var control = v4l2_control(id: id, value: value)
    return attempt(CV4L2_VIDIOC_S_CTRL(), &control) == nil
  }

  func readControl(_ id: UInt32) -> Int32? {
    var control = v4l2_control(id: id, value: 0)
    return attempt(CV4L2_VIDIOC_G_CTRL(), &control) == nil ? control.value : nil
  }

  func subscribe(_ event: Int32) throws(CodecDeviceError) {
    var subscription = v4l2_event_subscription()
    subscription.type = UInt32(event)
    try control("VIDIOC_SUBSCRIBE_EVENT", CV4L2_VIDIOC_SUBSCRIBE_EVENT(), &subscription)
  }

  /// The next pending event's type, or nil when none is pending.
  func nextEvent() -> UInt32? {
    var event = v4l2_event()
    return attempt(CV4L2_VIDIOC_DQEVENT(), &event) == nil ? event.type : nil
  }

  /// Longest wait for the codec to give a buffer back before the stream is declared stuck.
  static let stuckAfterMilliseconds: Int32 = 5000

  /// Runs `service` (which takes back what the driver has finished), then waits on the device and runs it
  /// again until `done`; a codec that gives nothing back for `stuckAfterMilliseconds` is an error that says
  /// what was awaited.
  func pump<Item>(
    until done: () -> Bool, awaiting what: String, _ service: () throws(CodecDeviceError) -> [Item]
  ) throws(CodecDeviceError) -> [Item] {
    var items = try service()
    while !done() {
      guard try wait(milliseconds: Self.stuckAfterMilliseconds) else {
        throw CodecDeviceError(path, "no \(what) in \(Self.stuckAfterMilliseconds) ms")
      }
      items += try service()
    }
    return items
  }

  /// Waits up to `milliseconds` for the device to have something: a buffer to dequeue on either queue
  /// (POLLIN, POLLOUT) or an event (POLLPRI). `false` on timeout.
  func wait(milliseconds: Int32) throws(CodecDeviceError) -> Bool {
    var entry = pollfd(fd: fd.raw, events: Int16(POLLIN | POLLOUT | POLLPRI), revents: 0)
    while true {
      let status = poll(&entry, 1, milliseconds)
      if status > 0 {
        if entry.revents & Int16(POLLERR) != 0 && entry.revents & Int16(POLLIN | POLLOUT | POLLPRI) == 0 {
          throw CodecDeviceError(path, "poll: error on the device")
        }
        return true
      }
      if status == 0 { return false }
      if Errno.current != .interrupted { throw CodecDeviceError(path, SystemCallError("poll", Errno.current)) }
    }
  }
}
