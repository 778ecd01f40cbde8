/// What can be captured, as `availableMediaTypesForSourceType` answers it.
public enum MediaType: String, Sendable, CaseIterable, Comparable {
  case stills, movies

  public static func < (lhs: MediaType, rhs: MediaType) -> Bool {
    allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
  }
}

/// How the configuration treats a capability.
public enum CapabilityRole: String, Sendable {
  case required, optional
  /// In neither list: never used, whatever the probe says.
  case unused
}

/// The gate's answer for one set of probe results.
public struct GateVerdict: Sendable, Equatable {
  /// One line per missing required capability, naming what was probed; not empty means the kiosk cannot run.
  public var fatal: [String]
  /// The required capabilities behind `fatal`, in the same order.
  public var missingRequired: [Capability] = []
  /// Optional capabilities that failed: their features are off. In capability order.
  public var disabled: [ProbeResult]
  /// Wanted capabilities that passed.
  public var usable: Set<Capability>
  public var mediaTypes: [MediaType]

  public var canRun: Bool { fatal.isEmpty }
}

/// Compares probe results with the configuration's `required` and `optional` lists. Pure: results in, verdict out.
public struct CapabilityGate: Sendable, Equatable {
  public let required: Set<Capability>
  public let optional: Set<Capability>
  /// `[movie] codec = h264`: movies only as H.264, so without the encoder there are none.
  public let moviesNeedEncoder: Bool

  public init(required: some Sequence<Capability>, optional: some Sequence<Capability>, moviesNeedEncoder: Bool = false) {
    self.required = Set(required)
    self.moviesNeedEncoder = moviesNeedEncoder
    // Required wins: the configuration parser refuses a capability in both lists, this keeps the gate total.
    self.optional = Set(optional).subtracting(self.required)
  }

  public init(_ capabilities: Config.Capabilities) {
    self.init(required: capabilities.required, optional: capabilities.optional)
  }

  /// The configuration's lists, less the optional capabilities it says are not fitted (`[buttons] mode = none`,
  /// `[display] device = none`, `[outputs] flash = none`, `[capture] zoom-maximum = 1.0`, `[movie] codec =
  /// mjpeg`, `[movie] audio = none`): a part left out on
  /// purpose is not a missing one, and is neither probed nor reported off. A required one stays required, and
  /// then fails.
  public init(_ config: Config) {
    let notFitted: Set<Capability> = Set(
      [
        config.buttons.shutter == nil ? Capability.shutterButton : nil,
        config.buttons.mode == nil ? .modeButton : nil,
        config.display.device == "none" ? .display : nil,
        config.outputs.flash == nil ? .flash : nil,
        config.capture.zoomMaximum <= 100 ? .zoom : nil,
        config.movie.codec == .mjpeg ? .h264Encoder : nil,
        // Sound goes into MP4 only: a Motion-JPEG movie has none to give it.
        config.movie.audio == .none || config.movie.codec == .mjpeg ? .microphone : nil,
      ].compactMap { $0 })
    self.init(
      required: config.capabilities.required, optional: config.capabilities.optional.filter { !notFitted.contains($0) },
      moviesNeedEncoder: config.movie.codec == .h264)
  }

  public func role(of capability: Capability) -> CapabilityRole {
    required.contains(capability) ? .required : optional.contains(capability) ? .optional : .unused
  }

  /// A wanted capability without a result counts as failed: nothing proves it is there.
  public func evaluate(_ results: [ProbeResult]) -> GateVerdict {
    var byCapability: [Capability: ProbeResult] = [:]
    for result in results { byCapability[result.capability] = result }
    var verdict = GateVerdict(fatal: [], disabled: [], usable: [], mediaTypes: [])
    for capability in Capability.allCases {
      let role = role(of: capability)
      guard role != .unused else { continue }
      let result = byCapability[capability] ?? .fail(capability, "not probed")
      if result.passed {
        verdict.usable.insert(capability)
      } else if role == .required {
        verdict.fatal.append("\(capability) (required): \(result.evidence)")
        verdict.missingRequired.append(capability)
      } else {
        verdict.disabled.append(result)
      }
    }
    verdict.mediaTypes = Self.mediaTypes(usable: verdict.usable, needEncoder: moviesNeedEncoder)
    return verdict
  }

  /// Stills need a still camera and a roll to put them in; movies need a movie camera and a roll, and the
  /// H.264 encoder when nothing else will do.
  public static func mediaTypes(usable: Set<Capability>, needEncoder: Bool = false) -> [MediaType] {
    guard usable.contains(.cameraRoll) else { return [] }
    var types: [MediaType] = []
    if usable.contains(.stillCamera) { types.append(.stills) }
    if usable.contains(.movieCamera), !needEncoder || usable.contains(.h264Encoder) { types.append(.movies) }
    return types
  }
}
