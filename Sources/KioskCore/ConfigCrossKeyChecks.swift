/// The checks that span keys, made once every key is read: each problem is reported on the later key's line
/// and names the earlier key, so that the file can be fixed from the message alone.
extension Config {
  /// A capability named in one list leaves the other's default; named in both lists, it is an error on the later line.
  static func reconcileCapabilities(
    _ config: inout Config, required: Int?, optional: Int?, file: String
  ) -> [ConfigProblem] {
    switch (required, optional) {
    case (nil, nil):
      return []
    case (.some, nil):
      config.capabilities.optional = Capability.allCases.filter { !config.capabilities.required.contains($0) }
      return []
    case (nil, .some):
      config.capabilities.required.removeAll { config.capabilities.optional.contains($0) }
      return []
    case (.some(let requiredLine), .some(let optionalLine)):
      let both = config.capabilities.required.filter { config.capabilities.optional.contains($0) }
      guard !both.isEmpty else { return [] }
      let names = both.map { "'\($0)'" }.joined(separator: ", ")
      let message =
        optionalLine > requiredLine
        ? "capabilities.optional: \(names) also required (line \(requiredLine)); a capability is one or the other"
        : "capabilities.required: \(names) also optional (line \(optionalLine)); a capability is one or the other"
      return [ConfigProblem(file: file, line: max(requiredLine, optionalLine), message: message)]
    }
  }

  /// Two keys that ask for the same GPIO line: two button roles, a role and a lamp, or two lamps. The lamps
  /// are on the buttons' chip (`[buttons] chip`), so every pair can clash. Each later user of a line is
  /// reported, naming the first; a key left at its default (only `shutter` has one) counts as coming first.
  static func lineConflicts(_ config: Config, setOn: [String: Int], refused: Set<String>, file: String)
    -> [ConfigProblem]
  {
    // ButtonRole's and Output's raw values are their keys' names (a test holds them to it).
    let buttons = config.buttons.lines.map { (section: "buttons", key: $0.0.rawValue, line: $0.1) }
    let lamps = config.outputs.lines.map { (section: "outputs", key: $0.0.rawValue, line: $0.1) }
    let uses = (buttons + lamps).compactMap { use -> (name: String, line: LineReference, setOn: Int?)? in
      let qualified = "\(use.section).\(use.key)"
      guard !refused.contains(qualified) else { return nil }
      return (name: "[\(use.section)] \(use.key)", line: use.line, setOn: setOn[qualified])
    }
    let inFileOrder = uses.enumerated()
      .sorted { ($0.element.setOn ?? 0, $0.offset) < ($1.element.setOn ?? 0, $1.offset) }.map(\.element)
    var problems: [ConfigProblem] = []
    for (index, use) in inFileOrder.enumerated() {
      // Only shutter has a default line, so two defaults never clash.
      guard let setOn = use.setOn else { continue }
      // Equal offsets or equal names are one line. A name and an offset may be one line too, but only the
      // chip knows its lines' names; at start the second request of such a line finds it already in use.
      guard let first = inFileOrder[..<index].first(where: { $0.line == use.line }) else { continue }
      let firstSetOn = first.setOn.map { "line \($0)" } ?? "by default"
      let message = "\(use.name) uses \(use.line), which \(first.name) (\(firstSetOn)) already uses"
      problems.append(ConfigProblem(file: file, line: setOn, message: message))
    }
    return problems
  }

  /// A libcamera camera id (a backslash first, as libcamera names a webcam on a PC, or commas inside, as on a Pi's
  /// PCIe bus) is no V4L2 device path: under `backend = v4l2` it is refused on the device's line, where the
  /// fix is either key.
  static func cameraDeviceBackend(_ config: Config, setOn: [String: Int], refused: Set<String>, file: String)
    -> [ConfigProblem]
  {
    let named = config.camera.cycle.isEmpty ? [config.camera.device] : config.camera.cycle
    guard config.camera.backend == .v4l2, let line = setOn["camera.device"], !refused.contains("camera.device"),
      let id = named.first(where: { $0.hasPrefix("\\") || $0.contains(",") })
    else { return [] }
    let message =
      "camera.device: \(id.quotedForMessage) is a libcamera camera id, not a V4L2 device: set [camera] backend = "
      + "libcamera (or auto), or separate cameras with commas, each a path"
    return [ConfigProblem(file: file, line: line, message: message)]
  }
}
