import Foundation
import Testing

extension BoardDeviceTests {
  /// bochs-drm has one plane, the primary, with XRGB8888 and BGRX8888 only, and cannot scale: the probe's
  /// verdict is the CPU path, with the evidence from the kernel (the planes, as modetest lists them too) and
  /// from two TEST_ONLY atomic commits: the screen-sized XR24 frame is accepted (the commit itself is well
  /// formed), the camera-sized one scaled onto the screen is refused.
  @Test func theProbeFindsNoYUVPlaneOnBochs() throws {
    let (config, _) = try Board.makeConfig(name: "planes")
    let result = try Board.run("\(Board.binary) probe --json --config \(config)")
    #expect(result.status == 0, "\(result.stderr)")
    let report = try JSONDecoder().decode(PlanesJSON.self, from: Data(result.stdout.utf8))
    let verdict = try #require(report.displayPlanes.first, "a plane verdict in \(result.stdout)")
    #expect(report.displayPlanes.count == 1)
    #expect(verdict.card == "/dev/dri/card0")
    #expect(verdict.decision == "cpu")
    #expect(verdict.plane == nil && verdict.format == nil)
    #expect(verdict.atomic)
    #expect(verdict.planes.map(\.type) == ["primary"])
    #expect(verdict.planes.allSatisfy { $0.onCRTC })
    #expect(verdict.evidence.hasPrefix("no YUV plane: no plane on the CRTC offers YUYV or NV12"), "\(verdict.evidence)")
    #expect(verdict.evidence.contains("unscaled 1280x800: accepted"), "\(verdict.evidence)")
    #expect(verdict.evidence.contains("scaled 640x360 to 1280x720: rejected"), "\(verdict.evidence)")

    // The same planes and formats as libdrm's own tool lists.
    let listing = try Board.run("modetest -M bochs-drm -p")
    #expect(listing.status == 0, "\(listing.stderr)")
    var planes: [(id: UInt32, formats: [String])] = []
    var inPlanes = false
    for line in listing.stdout.split(separator: "\n").map(String.init) {
      if line.hasPrefix("Planes:") { inPlanes = true; continue }
      guard inPlanes else { continue }
      // A plane's row starts at the margin with its id; property values below it are indented.
      if let first = line.first, first.isNumber, let id = line.split(separator: "\t").first.flatMap({ UInt32($0) }) {
        planes.append((id, []))
      } else if line.hasPrefix("  formats:"), !planes.isEmpty {
        planes[planes.count - 1].formats = line.dropFirst("  formats:".count).split(separator: " ").map(String.init)
      }
    }
    #expect(planes.map(\.id) == verdict.planes.map(\.id), "modetest: \(planes)")
    #expect(planes.map(\.formats) == verdict.planes.map(\.formats), "modetest: \(planes)")
    #expect(planes.first?.formats == ["XR24", "BX24"])
  }

  /// The service says its decision once, at start; while it is DRM master, `kioskcam probe` lists the planes
  /// but tries no commit.
  @Test func theServiceLogsThePlaneDecisionOnce() throws {
    let (config, _) = try Board.makeConfig(name: "planes-service")
    try Board.withService("planes-service", config: config) {
      let lines = try Board.logs("planes-service").split(separator: "\n").filter { $0.contains("display plane:") }
      #expect(lines.count == 1, "\(lines)")
      #expect(lines.first?.contains("display plane: cpu: no YUV plane") == true, "\(lines)")

      let result = try Board.run("\(Board.binary) probe --json --config \(config)")
      let report = try JSONDecoder().decode(PlanesJSON.self, from: Data(result.stdout.utf8))
      let verdict = try #require(report.displayPlanes.first, "\(result.stdout)")
      #expect(verdict.decision == "untested")
      #expect(verdict.evidence.hasPrefix("another program is DRM master"), "\(verdict.evidence)")
      #expect(verdict.planes.map(\.formats) == [["XR24", "BX24"]])
    }
  }
}

struct PlanesJSON: Decodable {
  struct Verdict: Decodable {
    struct Plane: Decodable {
      let id: UInt32
      let type: String
      let formats: [String]
      let onCRTC: Bool
    }
    let card, decision, evidence: String
    let plane: UInt32?
    let format: String?
    let atomic: Bool
    let planes: [Plane]
  }
  let displayPlanes: [Verdict]
}
