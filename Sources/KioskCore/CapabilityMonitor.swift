/// A change the running kiosk must act on and log once.
public enum CapabilityChange: Sendable, Equatable, CustomStringConvertible {
  case lost(Capability, CapabilityRole, evidence: String)
  case regained(Capability, evidence: String)
  case mediaTypes([MediaType])

  public var description: String {
    switch self {
    case .lost(let capability, let role, let evidence): "\(capability) (\(role)) lost: \(evidence)"
    case .regained(let capability, let evidence): "\(capability) back: \(evidence)"
    case .mediaTypes(let types):
      "media types now: \(types.isEmpty ? "none" : types.map(\.rawValue).joined(separator: ", "))"
    }
  }
}

/// The gate over time: hardware comes and goes while the kiosk runs, and each change is reported exactly once.
///
/// A required capability lost at run time is not fatal here: the service shows it and retries, it does not
/// crash-loop. Only the start decides to exit.
public struct CapabilityMonitor: Sendable {
  public let gate: CapabilityGate
  public private(set) var results: [Capability: ProbeResult] = [:]
  public private(set) var verdict: GateVerdict

  public init(gate: CapabilityGate, results: [ProbeResult]) {
    self.gate = gate
    for result in results { self.results[result.capability] = result }
    verdict = gate.evaluate(results)
  }

  public func isUsable(_ capability: Capability) -> Bool { verdict.usable.contains(capability) }

  /// A fresh probe result; the changes it brings, empty when the verdict is the same (a retry that failed
  /// again is not news, even with other words in its evidence).
  public mutating func update(_ result: ProbeResult) -> [CapabilityChange] {
    let role = gate.role(of: result.capability)
    guard role != .unused else { return [] }
    let before = results[result.capability]?.passed ?? false
    results[result.capability] = result
    guard before != result.passed else { return [] }
    let previousTypes = verdict.mediaTypes
    verdict = gate.evaluate(Array(results.values))
    var changes: [CapabilityChange] = [
      result.passed
        ? .regained(result.capability, evidence: result.evidence)
        : .lost(result.capability, role, evidence: result.evidence)
    ]
    if verdict.mediaTypes != previousTypes { changes.append(.mediaTypes(verdict.mediaTypes)) }
    return changes
  }
}
