#if canImport(Glibc)
  import Glibc
#endif
import CDRM
import Imaging
import LinuxIO

/// A KMS output: one connector, one CRTC, one mode, and dumb buffers flipped on page-flip events: two at
/// least, and more (as many as asked and the card's memory holds) so that pictures can be drawn off the loop
/// while one buffer is on screen and another waits for the vblank.
///
/// The loop watches `descriptor`; `handleEvents()` completes flips. Neither `present` nor `flip` blocks:
/// while a flip is pending they refuse, and the caller drops that picture or keeps it for the next flip.
public final class KMSDisplay {
  public let path: String
  public let connectorName: String
  public let width: Int
  public let height: Int
  private let card: DRMCard
  private let connectorID: UInt32
  private let crtcID: UInt32
  private var mode: drmModeModeInfo
  private let savedCRTC: UnsafeMutablePointer<drmModeCrtc>?
  /// Lent to whoever draws, from any thread.
  public let buffers: DisplayBuffers
  public private(set) var flipsCompleted = 0
  /// The buffer the last completed flip put on screen, and the vblank's time (CLOCK_MONOTONIC nanoseconds).
  public private(set) var lastFlip: (index: Int, nanoseconds: Int64)?

  /// Opens `path` (or, for `auto`, the first card with a connected connector) and sets its preferred mode.
  public init(device: String, buffers wanted: Int = 2) throws(DisplayError) {
    let path: String
    if device == "auto" {
      guard let found = DisplayProbe.firstConnected() else {
        throw .absent("no display: no DRM card has a connected connector")
      }
      path = found
    } else {
      path = device
    }
    self.path = path
    card = try DRMCard(path: path)
    guard let connector = card.connectors().first(where: { $0.connected && !$0.modes.isEmpty }),
      let mode = connector.preferredMode
    else { throw .absent("\(path): no connected connector with a mode") }
    guard let crtc = Self.crtc(for: connector, on: card) else {
      throw .absent("\(path): no CRTC can drive \(connector.name)")
    }
    connectorName = connector.name
    connectorID = connector.id
    crtcID = crtc
    self.mode = mode
    width = Int(mode.hdisplay)
    height = Int(mode.vdisplay)
    savedCRTC = drmModeGetCrtc(card.fd.raw, crtc)

    var made: [DumbBuffer] = []
    for _ in 0..<2 { made.append(try DumbBuffer(card: card, width: width, height: height)) }
    // Buffers beyond two only let more pictures be drawn at once: a card short of memory for them still works.
    while made.count < wanted, let extra = try? DumbBuffer(card: card, width: width, height: height) {
      made.append(extra)
    }
    for buffer in made { buffer.pixels.initializeMemory(as: UInt8.self, repeating: 0) }
    buffers = DisplayBuffers(made, width: width, height: height)
    var connectorIDs = [connectorID]
    let status = drmModeSetCrtc(card.fd.raw, crtcID, made[0].framebuffer, 0, 0, &connectorIDs, 1, &self.mode)
    if status != 0 {
      let error = Errno(-status == 0 ? errno : -status)
      if error == .accessDenied || error == .permissionDenied {
        throw .busy("\(path): another program is driving the display (not DRM master)")
      }
      throw .io(SystemCallError("\(path): drmModeSetCrtc", error))
    }
  }

  public var descriptor: FileDescriptor { card.fd.descriptor }

  /// Whether the connector is still connected, as the kernel last knew it (no probe: see `DRMCard.connectors`).
  /// A cable pulled out does not make page flips fail, so this is how an unplugged display is noticed.
  public var connectorConnected: Bool {
    card.connector(connectorID, probing: false)?.connected ?? false
  }

  /// Whether a hardware plane could show a `sourceWidth` x `sourceHeight` camera frame scaled to this screen,
  /// asked with TEST_ONLY atomic commits on this (master) descriptor: nothing on the screen changes.
  public func probePlanes(sourceWidth: Int, sourceHeight: Int) -> PlaneDecision {
    PlaneProbe.probe(card, connector: connectorID, crtc: crtcID, mode: mode, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
  }

  public var flipPending: Bool { buffers.pool.flipQueued }

  /// Queues a flip to a lent buffer; false (still lent) while another flip is pending.
  public func flip(_ lent: DisplayBuffer) throws(DisplayError) -> Bool {
    precondition(buffers.owns(lent), "a flip to another display's buffer")
    guard buffers.pool.queue(lent.index) else { return false }
    let status = drmModePageFlip(
      card.fd.raw, crtcID, lent.buffer.framebuffer, UInt32(DRM_MODE_PAGE_FLIP_EVENT),
      Unmanaged.passUnretained(self).toOpaque())
    guard status == 0 else {
      buffers.pool.unqueue(lent.index)
      throw .io(SystemCallError("\(path): drmModePageFlip", Errno(-status == 0 ? errno : -status)))
    }
    return true
  }

  /// Draws into a free buffer and queues a flip to it; false (nothing drawn) while a flip is pending or
  /// every other buffer is lent.
  @discardableResult
  public func present(_ draw: (DrawTarget) -> Void) throws(DisplayError) -> Bool {
    guard !flipPending, let lent = buffers.lend() else { return false }
    draw(lent.target)
    do {
      if try flip(lent) { return true }
    } catch {
      lent.giveBack()
      throw error
    }
    lent.giveBack()
    return false
  }

  /// Reads the card's events (call when its descriptor is readable); a completed flip frees the back buffer.
  public func handleEvents() {
    var context = drmEventContext()
    context.version = 2
    context.page_flip_handler = { _, _, seconds, microseconds, userData in
      guard let userData else { return }
      let display = Unmanaged<KMSDisplay>.fromOpaque(userData).takeUnretainedValue()
      guard let shown = display.buffers.pool.flipped() else { return }
      display.flipsCompleted += 1
      // DRM stamps page-flip events on CLOCK_MONOTONIC (DRM_CAP_TIMESTAMP_MONOTONIC), V4L2's clock too.
      display.lastFlip = (shown, Int64(seconds) * 1_000_000_000 + Int64(microseconds) * 1000)
    }
    _ = drmHandleEvent(card.fd.raw, &context)
  }

  /// Blocks until a pending flip completes, or `milliseconds` pass. Only for the last screen before exit,
  /// when there is no loop to wait on; the loop never calls this.
  public func waitForFlip(milliseconds: Int32) {
    while flipPending {
      var descriptor = pollfd(fd: card.fd.raw, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, milliseconds) > 0 else { return }
      handleEvents()
    }
  }

  deinit {
    // Give the screen back as we found it: the console or whoever had it before.
    if let saved = savedCRTC {
      var connectorIDs = [connectorID]
      var savedMode = saved.pointee.mode
      _ = drmModeSetCrtc(
        card.fd.raw, saved.pointee.crtc_id, saved.pointee.buffer_id, saved.pointee.x, saved.pointee.y, &connectorIDs, 1,
        &savedMode)
      drmModeFreeCrtc(saved)
    }
  }

  /// The CRTC already driving the connector, else the first free one an encoder of it can use.
  static func crtc(for connector: Connector, on card: DRMCard) -> UInt32? {
    if connector.encoderID != 0, let encoder = drmModeGetEncoder(card.fd.raw, connector.encoderID) {
      defer { drmModeFreeEncoder(encoder) }
      if encoder.pointee.crtc_id != 0 { return encoder.pointee.crtc_id }
    }
    let crtcs = card.crtcs()
    for encoderID in connector.encoders {
      guard let encoder = drmModeGetEncoder(card.fd.raw, encoderID) else { continue }
      defer { drmModeFreeEncoder(encoder) }
      for (index, crtc) in crtcs.enumerated() where encoder.pointee.possible_crtcs & (1 << UInt32(index)) != 0 {
        return crtc
      }
    }
    return nil
  }
}

/// What a dumb buffer holds: the preview's XRGB8888, or a camera format a plane could scan out and scale.
enum ScanoutFormat: CaseIterable {
  case xrgb8888, yuyv, nv12

  var fourcc: UInt32 {
    switch self {
    case .xrgb8888: CDRM_FORMAT_XRGB8888()
    case .yuyv: CDRM_FORMAT_YUYV()
    case .nv12: CDRM_FORMAT_NV12()
    }
  }
  /// Bits a pixel of the buffer's first plane, and rows the dumb buffer needs (NV12's CbCr rows follow its Y rows).
  var bitsPerPixel: UInt32 { self == .xrgb8888 ? 32 : self == .yuyv ? 16 : 8 }
  func rows(_ height: Int) -> Int { self == .nv12 ? height + (height + 1) / 2 : height }
}

/// A dumb buffer: memory the kernel can scan out, mapped for the CPU, registered as a framebuffer.
final class DumbBuffer {
  let framebuffer: UInt32
  let stride: Int
  private let handle: UInt32
  private let mapping: Mapping
  private let card: DRMCard

  init(card: DRMCard, width: Int, height: Int, format: ScanoutFormat = .xrgb8888) throws(DisplayError) {
    self.card = card
    var create = drm_mode_create_dumb()
    create.width = UInt32(width)
    create.height = UInt32(format.rows(height))
    create.bpp = format.bitsPerPixel
    try card.control("DRM_IOCTL_MODE_CREATE_DUMB", CDRM_IOCTL_MODE_CREATE_DUMB(), &create)
    handle = create.handle
    stride = Int(create.pitch)
    var map = drm_mode_map_dumb()
    map.handle = handle
    do {
      try card.control("DRM_IOCTL_MODE_MAP_DUMB", CDRM_IOCTL_MODE_MAP_DUMB(), &map)
      mapping = try Mapping(fd: card.fd.descriptor, count: Int(create.size), offset: Int64(map.offset))
    } catch let error as DisplayError {
      Self.destroy(handle, on: card)
      throw error
    } catch {
      Self.destroy(handle, on: card)
      throw .io(error as! SystemCallError)
    }
    // NV12's second plane is the same buffer, after the luma rows.
    let second: UInt32 = format == .nv12 ? handle : 0
    var handles: (UInt32, UInt32, UInt32, UInt32) = (handle, second, 0, 0)
    var pitches: (UInt32, UInt32, UInt32, UInt32) = (create.pitch, format == .nv12 ? create.pitch : 0, 0, 0)
    var offsets: (UInt32, UInt32, UInt32, UInt32) = (0, format == .nv12 ? create.pitch * UInt32(height) : 0, 0, 0)
    var id: UInt32 = 0
    // Whole tuples are bound, not `&tuple.0`: an optimised build may pass a copy of the first element only.
    let status = withUnsafeMutablePointer(to: &handles) { h in
      withUnsafeMutablePointer(to: &pitches) { p in
        withUnsafeMutablePointer(to: &offsets) { o in
          h.withMemoryRebound(to: UInt32.self, capacity: 4) { h in
            p.withMemoryRebound(to: UInt32.self, capacity: 4) { p in
              o.withMemoryRebound(to: UInt32.self, capacity: 4) { o in
                drmModeAddFB2(card.fd.raw, UInt32(width), UInt32(height), format.fourcc, h, p, o, &id, 0)
              }
            }
          }
        }
      }
    }
    guard status == 0 else {
      Self.destroy(handle, on: card)
      throw .io(SystemCallError("\(card.path): drmModeAddFB2", Errno(-status == 0 ? errno : -status)))
    }
    framebuffer = id
  }

  var pixels: UnsafeMutableRawBufferPointer { mapping.bytes }

  private static func destroy(_ handle: UInt32, on card: DRMCard) {
    var destroy = drm_mode_destroy_dumb(handle: handle)
    try? card.control("DRM_IOCTL_MODE_DESTROY_DUMB", CDRM_IOCTL_MODE_DESTROY_DUMB(), &destroy)
  }

  deinit {
    _ = drmModeRmFB(card.fd.raw, framebuffer)
    Self.destroy(handle, on: card)
  }
}
