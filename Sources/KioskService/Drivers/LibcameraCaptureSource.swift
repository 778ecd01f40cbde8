import Camera
import KioskCore
import LibcameraCamera

extension LibcameraCaptureStream: CaptureStream {}

/// libcamera's cameras, listed and opened through the process's one camera manager.
///
/// libcamera allows one CameraManager a process (a second aborts it; the shim refuses it instead), and an open
/// camera needs its manager running: so the service's listings at start, the open, and every retry after an
/// unplug go through this source's manager, made at the first listing and kept for the process's life (it
/// also sees a camera come back: libcamera follows hot-plug while it runs).
final class LibcameraCaptureSource: CaptureSource {
  /// Loaded at the first look at libcamera, not before: a kiosk on V4L2 never maps libcamera at all.
  private lazy var library = load()
  private let load: () -> Result<LibcameraLibrary, LibcameraUnavailable>
  private var manager: LibcameraManager?
  /// The listing the last open chose from: the movie camera's verdict on a camera back reads it rather than
  /// ask libcamera to describe a camera that is streaming.
  private var opened: LibcameraReport?

  init(library: @escaping @autoclosure () -> Result<LibcameraLibrary, LibcameraUnavailable> = LibcameraLibrary.shared) {
    load = library
  }

  /// What libcamera lists now, or why it cannot: the probes' input.
  func report() -> LibcameraReport {
    switch library {
    case .failure(let unavailable): return LibcameraReport(.failure(unavailable))
    case .success(let library):
      do {
        return LibcameraReport(listing: try running(library))
      } catch {
        return LibcameraReport(version: library.version, library: library.path, problem: "libcamera: \(error)", cameras: [])
      }
    }
  }

  private func running(_ library: LibcameraLibrary) throws(CameraError) -> LibcameraManager {
    if let manager { return manager }
    let made = try LibcameraManager(library)
    manager = made
    return made
  }

  /// Opens camera `id` in the format the probe's choice gives at `[camera] size`, at `[camera] frame-rate`.
  func open(_ id: String, _ settings: Config.Camera) throws(CameraError) -> any CaptureStream {
    let library: LibcameraLibrary
    switch self.library {
    case .failure(let unavailable): throw .absent(unavailable.description)
    case .success(let loaded): library = loaded
    }
    let listing = report()
    let found = CapabilityProbe.judgeLibcamera(listing, device: id, format: settings.format, size: settings.size)
    switch found {
    case .failure(let failure):
      // Not listed (not yet back from an unplug, or never there) is a camera that is absent; listed, it cannot
      // give a format the frame paths read at the size.
      guard listing.cameras.contains(where: { $0.id == id }) else { throw .absent(failure.reason) }
      throw .unsupported(failure.reason)
    case .success(let found):
      let stream = try LibcameraCaptureStream(
        try running(library), camera: found.camera, choice: found.choice, frameRate: settings.frameRate)
      opened = listing
      return stream
    }
  }

  func find(_ config: Config) -> (result: ProbeResult, path: String?) {
    let (result, id) = CapabilityProbe.libcameraCamera(.stillCamera, config, size: config.camera.size, report: report())
    return (result, id)
  }

  func movieCamera(_ config: Config) -> ProbeResult {
    CapabilityProbe.rateUnchecked(
      CapabilityProbe.libcameraCamera(.movieCamera, config, size: config.movie.size, report: opened ?? report()).result)
  }
}
