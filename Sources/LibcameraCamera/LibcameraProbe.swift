/// What `kioskcam probe` says about libcamera: the version the shim loaded, or why it could not, and the
/// cameras libcamera lists. Only looks: no camera is acquired.
public struct LibcameraReport: Encodable, Sendable, Equatable {
  /// The loaded libcamera's version; nil when the shim did not load.
  public let version: String?
  /// Where the shim was opened from.
  public let library: String?
  /// Why libcamera cannot be used (shim or libcamera missing, camera manager failed); nil when it can.
  public let problem: String?
  public let cameras: [LibcameraCameraInfo]

  public init(version: String?, library: String?, problem: String?, cameras: [LibcameraCameraInfo]) {
    self.version = version
    self.library = library
    self.problem = problem
    self.cameras = cameras
  }

  /// Opens a camera manager for as long as the listing takes: for a process that has none (`kioskcam probe`).
  public init(_ library: Result<LibcameraLibrary, LibcameraUnavailable> = LibcameraLibrary.shared) {
    switch library {
    case .failure(let unavailable):
      self.init(version: nil, library: nil, problem: unavailable.description, cameras: [])
    case .success(let library):
      do {
        self.init(listing: try LibcameraManager(library))
      } catch {
        self.init(version: library.version, library: library.path, problem: "libcamera: \(error)", cameras: [])
      }
    }
  }

  /// What `manager`, already running, lists now: for the process that keeps one (libcamera allows one a process).
  public init(listing manager: LibcameraManager) {
    let library = manager.library
    do {
      self.init(version: library.version, library: library.path, problem: nil, cameras: try manager.cameras())
    } catch {
      self.init(version: library.version, library: library.path, problem: "libcamera: \(error)", cameras: [])
    }
  }

  /// The lines `kioskcam probe` prints.
  public var text: [String] {
    guard let version else { return ["  unavailable: \(problem ?? "")"] }
    var lines = ["  libcamera \(version)" + (problem.map { ": \($0)" } ?? "")]
    if cameras.isEmpty && problem == nil { lines.append("  no camera") }
    for camera in cameras {
      let features = [camera.scalerCrop ? "ScalerCrop" : nil, camera.autofocus ? "AfTrigger" : nil].compactMap { $0 }
      lines.append(
        "  \(camera.id): \(camera.model.isEmpty ? "(no model)" : camera.model)"
          + (camera.location.map { ", \($0)" } ?? "") + ", controls: "
          + (features.isEmpty ? "none used" : features.joined(separator: " ")))
      for format in camera.formats {
        let sizes = format.sizeRange ? format.sizes.joined(separator: " to ") : format.sizes.joined(separator: " ")
        lines.append("    \(format.name) (\(format.fourcc)): \(sizes)")
      }
    }
    return lines
  }
}
