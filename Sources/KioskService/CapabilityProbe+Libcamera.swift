import KioskCore
import LibcameraCamera

/// still-camera and movie-camera through libcamera (`[camera] backend = libcamera`, or `auto` with no V4L2
/// camera that qualifies): the shim loads, libcamera lists a camera, and it offers a usable format at the size.
extension CapabilityProbe {
  /// Why `kioskcam run` does not take a libcamera camera yet: the frames are not wired into the preview,
  /// still and movie paths (issue 40, stage 2). The probe command shows what the hardware offers regardless.
  static let libcameraNotStreamed = "streaming from libcamera is not in this build yet (issue 40, stage 2)"

  /// The verdict for `capability` at `size`; `forRun` turns a camera found into a failure with
  /// `libcameraNotStreamed`, so that the service never passes a camera it cannot open.
  static func libcameraCamera(
    _ capability: Capability, _ config: Config, size: Size, forRun: Bool,
    report: @autoclosure () -> LibcameraReport = LibcameraReport()
  ) -> ProbeResult {
    let verdict = judgeLibcamera(report(), device: config.camera.device, format: config.camera.format, size: size)
    switch verdict {
    case .failure(let reason): return .fail(capability, reason.reason)
    case .success(let evidence):
      let rate = capability == .movieCamera ? "; frame rate not checked through libcamera" : ""
      return forRun ? .fail(capability, "\(evidence); \(libcameraNotStreamed)") : .pass(capability, evidence + rate)
    }
  }

  /// Pure: what a libcamera listing means for a camera configured as `device` (auto, or a camera id).
  static func judgeLibcamera(_ report: LibcameraReport, device: String, format: PixelFormat, size: Size)
    -> Result<String, LibcameraChoiceFailure>
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
      case .success(let choice): return .success("\(name): \(choice.format) \(choice.size)")
      case .failure(let failure): reasons.append("\(name): \(failure.reason)")
      }
    }
    return .failure(LibcameraChoiceFailure(reason: reasons.joined(separator: "; ")))
  }
}
