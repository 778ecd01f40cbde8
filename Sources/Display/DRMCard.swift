#if canImport(Glibc)
  import Glibc
#endif
import CDRM
import LinuxIO

/// One open DRM card node.
final class DRMCard {
  let path: String
  let fd: OwnedFD

  init(path: String) throws(DisplayError) {
    self.path = path
    do {
      fd = try OwnedFD(opening: path, flags: O_RDWR)
    } catch {
      throw error.errno == .noSuchFile ? .absent("\(path): no such display card") : .io(error)
    }
  }

  /// The kernel driver's name (`bochs-drm`, `vc4`).
  var driver: String {
    guard let version = drmGetVersion(fd.raw) else { return "unknown" }
    defer { drmFreeVersion(version) }
    return String(cString: version.pointee.name)
  }

  /// Every connector of the card, in the kernel's order.
  ///
  /// `probing` asks the driver to detect each connector again (reading EDID over DDC on real hardware, tens of
  /// milliseconds); without it the kernel's last known state is returned, which hot-plug interrupts and the
  /// driver's own polling keep up to date: cheap enough to ask every second.
  func connectors(probing: Bool = true) -> [Connector] {
    guard let resources = drmModeGetResources(fd.raw) else { return [] }
    defer { drmModeFreeResources(resources) }
    return (0..<Int(resources.pointee.count_connectors)).compactMap {
      connector(resources.pointee.connectors[$0], probing: probing)
    }
  }

  func connector(_ id: UInt32, probing: Bool) -> Connector? {
    guard let connector = probing ? drmModeGetConnector(fd.raw, id) : drmModeGetConnectorCurrent(fd.raw, id) else {
      return nil
    }
    defer { drmModeFreeConnector(connector) }
    return Connector(connector.pointee)
  }

  /// CRTC ids, in the order the encoders' `possible_crtcs` bits refer to them.
  func crtcs() -> [UInt32] {
    guard let resources = drmModeGetResources(fd.raw) else { return [] }
    defer { drmModeFreeResources(resources) }
    return (0..<Int(resources.pointee.count_crtcs)).map { resources.pointee.crtcs[$0] }
  }

  /// One ioctl through libdrm's EINTR-retrying `drmIoctl`.
  func control<Argument>(_ name: String, _ request: UInt, _ argument: inout Argument) throws(DisplayError) {
    do {
      _ = try withUnsafeMutableBytes(of: &argument) { (bytes) throws(SystemCallError) in
        try systemCall(name) { drmIoctl(fd.raw, request, bytes.baseAddress) }
      }
    } catch {
      throw .io(SystemCallError("\(path): \(error.call)", error.errno))
    }
  }
}

/// A connector as the kernel describes it.
struct Connector {
  let id: UInt32
  let name: String
  let connected: Bool
  let status: String
  let encoderID: UInt32
  let encoders: [UInt32]
  let modes: [drmModeModeInfo]

  init(_ connector: drmModeConnector) {
    id = connector.connector_id
    let typeName = drmModeGetConnectorTypeName(connector.connector_type).map { String(cString: $0) } ?? "Unknown"
    name = "\(typeName)-\(connector.connector_type_id)"
    switch connector.connection {
    case DRM_MODE_CONNECTED: (connected, status) = (true, "connected")
    case DRM_MODE_DISCONNECTED: (connected, status) = (false, "disconnected")
    default: (connected, status) = (false, "unknown")
    }
    encoderID = connector.encoder_id
    encoders = (0..<Int(connector.count_encoders)).map { connector.encoders[$0] }
    modes = (0..<Int(connector.count_modes)).map { connector.modes[$0] }
  }

  /// The mode the connector prefers, or its first.
  var preferredMode: drmModeModeInfo? {
    modes.first { $0.type & UInt32(DRM_MODE_TYPE_PREFERRED) != 0 } ?? modes.first
  }
}

extension drmModeModeInfo {
  var nameString: String {
    withUnsafeBytes(of: name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
  }
  var isPreferred: Bool { type & UInt32(DRM_MODE_TYPE_PREFERRED) != 0 }
}
