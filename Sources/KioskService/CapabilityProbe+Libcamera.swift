import KioskCore
import LibcameraCamera

/// A camera libcamera lists that the frame paths can stream from: its description and the format and size chosen.
struct LibcameraFound: Equatable {
  let camera: LibcameraCameraInfo
  let choice: LibcameraStreamChoice
  /// How the gate says it: libcamera's version, the camera's id and model, the format and size.
  let evidence: String
}

/// still-camera and movie-camera through libcamera (`[camera] backend = libcamera`, or `auto` with no V4L2
/// camera that qualifies): the shim loads, libcamera lists a camera, and it offers a usable format at the size.
extension CapabilityProbe {
  /// The verdict for `capability` at `size`, and the id of the camera that passed. `report` is the listing:
  /// a camera manager of its own for `kioskcam probe`, the capture source's one in the service (libcamera
  /// allows one a process).
  static func libcameraCamera(
    _ capability: Capability, _ config: Config, size: Size,
    report: @autoclosure () -> LibcameraReport = LibcameraReport()
  ) -> (result: ProbeResult, id: String?) {
    switch judgeLibcamera(report(), device: config.camera.device, format: config.camera.format, size: size) {
    case .failure(let reason): return (.fail(capability, reason.reason), nil)
    case .success(let found): return (.pass(capability, found.evidence), found.camera.id)
    }
  }

  /// A movie-camera verdict from the listing alone, which says so: measuring the rate needs the camera opened.
  static func rateUnchecked(_ listed: ProbeResult) -> ProbeResult {
    listed.passed ? .pass(.movieCamera, listed.evidence + "; frame rate not checked through libcamera") : listed
  }

  /// Pure: what a libcamera listing means for a camera configured as `device` (auto, or a camera id).
  static func judgeLibcamera(_ report: LibcameraReport, device: String, format: PixelFormat, size: Size)
    -> Result<LibcameraFound, LibcameraChoiceFailure>
  {
    guard let version = report.version else {
      return .failure(LibcameraChoiceFailure(reason: report.problem ?? "libcamera: not loaded"))
    }
    if let problem = report.problem { return .failure(LibcameraChoiceFailure(reason: "libcamera \(version): \(problem)")) }
    let candidates = device == "auto" ? report.cameras : report.cameras.filter { $0.id == device }
    guard !candidates.isEmpty else {
      let listed = report.cameras.isEmpty ? "lists no camera" : "has " + report.cameras.map(\.id).joined(separator: ", ")
      let wanted = device == "auto" ? "" : "no camera \(device): "
      return .failure(LibcameraChoiceFailure(reason: "libcamera \(version): \(wanted)\(listed)"))
    }
    var reasons: [String] = []
    for camera in candidates {
      let name = "libcamera \(version): \(camera.id) (\(camera.model.isEmpty ? "no model" : camera.model))"
      switch LibcameraStreamChoice.choose(camera, preferring: format, size: size) {
      case .success(let choice):
        return .success(LibcameraFound(camera: camera, choice: choice, evidence: "\(name): \(choice.format) \(choice.size)"))
      case .failure(let failure): reasons.append("\(name): \(failure.reason)")
      }
    }
    return .failure(LibcameraChoiceFailure(reason: reasons.joined(separator: "; ")))
  }
}
