/// The modes the gate's verdict allows: still and movie follow the media types; review needs a screen to
/// show the roll on (the kiosk also wants something in it). `rollOpen`: the roll was opened at start, which
/// movies need besides their media type.
extension GateVerdict {
  public func kioskModes(rollOpen: Bool) -> Set<KioskMode> {
    var modes: Set<KioskMode> = []
    if mediaTypes.contains(.stills) { modes.insert(.still) }
    if mediaTypes.contains(.movies), rollOpen { modes.insert(.movie) }
    if usable.contains(.display), rollOpen { modes.insert(.review) }
    return modes
  }

  /// Required capabilities lost at run time that no screen of their own tells about (the cameras and the
  /// roll have "Camera not available" and "Storage not available"): the buttons, the flash and the zoom
  /// join the overlay's "Off:" with the optional ones that are missing.
  public var offOnScreen: [Capability] {
    disabled.map(\.capability) + missingRequired.filter { [.shutterButton, .modeButton, .flash, .zoom].contains($0) }
  }
}
