#if canImport(Glibc)
  import Glibc
#endif
import CDRM
import Imaging
import LinuxIO

/// One plane of a card as the kernel lists it (universal planes).
public struct PlaneInfo: Encodable, Sendable, Equatable {
  public let id: UInt32
  /// `primary`, `overlay` or `cursor`.
  public let type: String
  /// DRM fourccs as the kernel's tools print them (`XR24`, `YUYV`, `NV12`).
  public let formats: [String]
  /// Whether the plane can be on the CRTC that drives the preview's connector (its `possible_crtcs`).
  public let onCRTC: Bool
}

/// Whether the preview can be scanned out by a plane that scales a camera format itself, and why: the
/// planes the card has, and what a TEST_ONLY atomic commit said (`kioskcam probe --json`, and the log once).
public struct PlaneDecision: Encodable, Sendable, Equatable {
  public let card: String
  /// `plane`: a plane took a YUYV or NV12 framebuffer scaled onto the screen; `cpu`: none did, the preview is
  /// converted and scaled on the CPU into XRGB8888; `untested`: another program is DRM master.
  public let decision: String
  public let plane: UInt32?
  public let format: String?
  public let atomic: Bool
  public let planes: [PlaneInfo]
  public let evidence: String
}

/// Finds a plane that can show a camera frame as it is (YUYV or NV12) scaled by the display hardware. Each
/// candidate is asked with a TEST_ONLY atomic commit, which the driver checks fully and applies never.
/// It needs DRM master (the card's only opener is master); nothing on the screen changes.
public enum PlaneProbe {
  /// The formats a plane would be given, in the order cameras deliver them most.
  static let cameraFormats: [ScanoutFormat] = [.yuyv, .nv12]

  /// Opens `path` and probes the connector and CRTC `KMSDisplay` would use, at their preferred mode, for a
  /// `sourceWidth` x `sourceHeight` camera frame fitted to the screen.
  public static func probe(path: String, sourceWidth: Int, sourceHeight: Int) throws(DisplayError) -> PlaneDecision {
    let card = try DRMCard(path: path)
    guard let connector = card.connectors().first(where: { $0.connected && !$0.modes.isEmpty }),
      let mode = connector.preferredMode
    else { throw .absent("\(path): no connected connector with a mode") }
    guard let crtc = KMSDisplay.crtc(for: connector, on: card) else {
      throw .absent("\(path): no CRTC can drive \(connector.name)")
    }
    return probe(card, connector: connector.id, crtc: crtc, mode: mode, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
  }

  static func probe(
    _ card: DRMCard, connector: UInt32, crtc: UInt32, mode: drmModeModeInfo, sourceWidth: Int, sourceHeight: Int
  ) -> PlaneDecision {
    let fd = card.fd.raw
    func cpu(_ atomic: Bool, _ planes: [PlaneInfo], _ evidence: String) -> PlaneDecision {
      PlaneDecision(card: card.path, decision: "cpu", plane: nil, format: nil, atomic: atomic, planes: planes, evidence: evidence)
    }
    guard drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1) == 0 else {
      return cpu(false, [], "the driver lists no universal planes")
    }
    let atomic = drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_ATOMIC), 1) == 0
    let crtcIndex = card.crtcs().firstIndex(of: crtc) ?? 0
    let planes = listPlanes(card, crtcIndex: crtcIndex)
    let listing = planes.map { "plane \($0.id) \($0.type)\($0.onCRTC ? "" : " (other CRTC)"): \($0.formats.joined(separator: " "))" }
      .joined(separator: "; ")
    guard drmIsMaster(fd) != 0 else {
      return PlaneDecision(
        card: card.path, decision: "untested", plane: nil, format: nil, atomic: atomic, planes: planes,
        evidence: "another program is DRM master (a running kioskcam?): no commit tried (\(listing))")
    }
    let screenWidth = Int(mode.hdisplay)
    let screenHeight = Int(mode.vdisplay)
    let fit = fitted(sourceWidth, sourceHeight, into: screenWidth, screenHeight)
    let candidates = planes.filter { $0.onCRTC && $0.type != "cursor" }
      .flatMap { plane in cameraFormats.filter { plane.formats.contains(FourCC(code: $0.fourcc).description) }.map { (plane, $0) } }
      // An overlay leaves the primary plane to the XRGB8888 buffer that carries the overlay's text.
      .sorted { ($0.0.type == "overlay" ? 0 : 1) < ($1.0.type == "overlay" ? 0 : 1) }
    guard !candidates.isEmpty else {
      var evidence = "no YUV plane: no plane on the CRTC offers YUYV or NV12 (\(listing))"
      // What the primary plane does with a scaled XRGB8888 frame: whether the driver scales at all.
      if atomic, let primary = planes.first(where: { $0.onCRTC && $0.type == "primary" }) {
        let whole = testCommit(
          card, plane: primary.id, format: .xrgb8888, source: (screenWidth, screenHeight),
          onto: (0, 0, screenWidth, screenHeight), connector: connector, crtc: crtc, mode: mode)
        let scaled = testCommit(
          card, plane: primary.id, format: .xrgb8888, source: (sourceWidth, sourceHeight), onto: fit,
          connector: connector, crtc: crtc, mode: mode)
        evidence += "; TEST_ONLY XR24 on plane \(primary.id) unscaled \(screenWidth)x\(screenHeight): \(whole)"
        evidence += ", scaled \(sourceWidth)x\(sourceHeight) to \(fit.2)x\(fit.3): \(scaled)"
      }
      return cpu(atomic, planes, evidence)
    }
    guard atomic else {
      return cpu(false, planes, "no atomic modesetting: a YUV plane cannot be tested without showing it (\(listing))")
    }
    var refusals: [String] = []
    for (plane, format) in candidates {
      let verdict = testCommit(
        card, plane: plane.id, format: format, source: (sourceWidth, sourceHeight), onto: fit, connector: connector,
        crtc: crtc, mode: mode)
      let name = FourCC(code: format.fourcc).description
      if verdict == "accepted" {
        return PlaneDecision(
          card: card.path, decision: "plane", plane: plane.id, format: name, atomic: true, planes: planes,
          evidence: "TEST_ONLY \(name) on \(plane.type) plane \(plane.id) scaled \(sourceWidth)x\(sourceHeight) to \(fit.2)x\(fit.3): accepted")
      }
      refusals.append("\(name) on plane \(plane.id): \(verdict)")
    }
    return cpu(true, planes, "TEST_ONLY commits scaled \(sourceWidth)x\(sourceHeight) to \(fit.2)x\(fit.3) refused: \(refusals.joined(separator: "; "))")
  }

  static func listPlanes(_ card: DRMCard, crtcIndex: Int) -> [PlaneInfo] {
    let fd = card.fd.raw
    guard let resources = drmModeGetPlaneResources(fd) else { return [] }
    defer { drmModeFreePlaneResources(resources) }
    return (0..<Int(resources.pointee.count_planes)).compactMap { index -> PlaneInfo? in
      guard let plane = drmModeGetPlane(fd, resources.pointee.planes[index]) else { return nil }
      defer { drmModeFreePlane(plane) }
      let formats = (0..<Int(plane.pointee.count_formats)).map { FourCC(code: plane.pointee.formats[$0]).description }
      let type: String =
        switch properties(card, plane.pointee.plane_id, DRM_MODE_OBJECT_PLANE)["type"]?.value {
        case UInt64(DRM_PLANE_TYPE_PRIMARY): "primary"
        case UInt64(DRM_PLANE_TYPE_CURSOR): "cursor"
        default: "overlay"
        }
      return PlaneInfo(
        id: plane.pointee.plane_id, type: type, formats: formats,
        onCRTC: plane.pointee.possible_crtcs & (1 << UInt32(crtcIndex)) != 0)
    }
  }

  /// Asks the driver whether `plane` can scan out a `format` framebuffer of `source` size scaled onto the
  /// rectangle `onto` of the mode, with the CRTC on and driving the connector: "accepted", or why not.
  static func testCommit(
    _ card: DRMCard, plane: UInt32, format: ScanoutFormat, source: (Int, Int), onto: (Int, Int, Int, Int),
    connector: UInt32, crtc: UInt32, mode: drmModeModeInfo
  ) -> String {
    let fd = card.fd.raw
    let buffer: DumbBuffer
    do {
      buffer = try DumbBuffer(card: card, width: source.0, height: source.1, format: format)
    } catch {
      return "no framebuffer (\(error))"
    }
    var mode = mode
    var blob: UInt32 = 0
    guard drmModeCreatePropertyBlob(fd, &mode, MemoryLayout<drmModeModeInfo>.size, &blob) == 0 else {
      return "no mode blob (\(Errno(errno)))"
    }
    defer { drmModeDestroyPropertyBlob(fd, blob) }
    guard let request = drmModeAtomicAlloc() else { return "out of memory" }
    defer { drmModeAtomicFree(request) }
    let planeProperties = properties(card, plane, DRM_MODE_OBJECT_PLANE)
    let crtcProperties = properties(card, crtc, DRM_MODE_OBJECT_CRTC)
    let connectorProperties = properties(card, connector, DRM_MODE_OBJECT_CONNECTOR)
    let values: [(UInt32, [String: (id: UInt32, value: UInt64)], String, UInt64)] = [
      (plane, planeProperties, "FB_ID", UInt64(buffer.framebuffer)),
      (plane, planeProperties, "CRTC_ID", UInt64(crtc)),
      // Source coordinates are 16.16 fixed point.
      (plane, planeProperties, "SRC_X", 0), (plane, planeProperties, "SRC_Y", 0),
      (plane, planeProperties, "SRC_W", UInt64(source.0) << 16), (plane, planeProperties, "SRC_H", UInt64(source.1) << 16),
      (plane, planeProperties, "CRTC_X", UInt64(onto.0)), (plane, planeProperties, "CRTC_Y", UInt64(onto.1)),
      (plane, planeProperties, "CRTC_W", UInt64(onto.2)), (plane, planeProperties, "CRTC_H", UInt64(onto.3)),
      (crtc, crtcProperties, "ACTIVE", 1), (crtc, crtcProperties, "MODE_ID", UInt64(blob)),
      (connector, connectorProperties, "CRTC_ID", UInt64(crtc)),
    ]
    for (object, known, name, value) in values {
      guard let property = known[name] else { return "no \(name) property" }
      guard drmModeAtomicAddProperty(request, object, property.id, value) >= 0 else { return "cannot set \(name)" }
    }
    let status = drmModeAtomicCommit(fd, request, UInt32(DRM_MODE_ATOMIC_TEST_ONLY | DRM_MODE_ATOMIC_ALLOW_MODESET), nil)
    guard status != 0 else { return "accepted" }
    return "rejected (\(Errno(-status == 0 ? errno : -status)))"
  }

  /// An object's properties by name, with their current values.
  static func properties(_ card: DRMCard, _ object: UInt32, _ type: UInt32) -> [String: (id: UInt32, value: UInt64)] {
    let fd = card.fd.raw
    guard let list = drmModeObjectGetProperties(fd, object, type) else { return [:] }
    defer { drmModeFreeObjectProperties(list) }
    var found: [String: (id: UInt32, value: UInt64)] = [:]
    for index in 0..<Int(list.pointee.count_props) {
      guard let property = drmModeGetProperty(fd, list.pointee.props[index]) else { continue }
      defer { drmModeFreeProperty(property) }
      let name = withUnsafeBytes(of: property.pointee.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      found[name] = (list.pointee.props[index], list.pointee.prop_values[index])
    }
    return found
  }

  /// The aspect-fit rectangle (x, y, width, height) of a source on the screen, as the preview draws it.
  static func fitted(_ width: Int, _ height: Int, into screenWidth: Int, _ screenHeight: Int) -> (Int, Int, Int, Int) {
    let fit = PixelRect.aspectFit(sourceWidth: width, sourceHeight: height, into: screenWidth, screenHeight)
    return (fit.x, fit.y, fit.width, fit.height)
  }
}
