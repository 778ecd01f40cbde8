import CV4L2
import KioskCore

/// The camera's own zoom: V4L2_CID_ZOOM_ABSOLUTE, the one zoom control a step can be set on and come back
/// to. ZOOM_RELATIVE moves by an amount from wherever the lens is (reset cannot be told where that is) and
/// ZOOM_CONTINUOUS starts a motor at a speed until told to stop: both are reported, neither is used.
extension V4L2Device {
  /// The control's description, nil when the driver has none (EINVAL) or it is disabled.
  func queryControl(_ id: UInt32) -> v4l2_queryctrl? {
    var query = v4l2_queryctrl()
    query.id = id
    guard (try? enumerate("VIDIOC_QUERYCTRL", CV4L2_VIDIOC_QUERYCTRL(), &query)) == true,
      query.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) == 0
    else { return nil }
    return query
  }

  /// ZOOM_ABSOLUTE as a range the kiosk can step, nil when the camera has none, cannot be set (read-only),
  /// or has a single position.
  var zoomRange: CameraZoomRange? {
    guard let query = queryControl(CV4L2_CID_ZOOM_ABSOLUTE()),
      query.type == V4L2_CTRL_TYPE_INTEGER.rawValue, query.flags & UInt32(V4L2_CTRL_FLAG_READ_ONLY) == 0
    else { return nil }
    let range = CameraZoomRange(minimum: Int(query.minimum), maximum: Int(query.maximum), step: Int(query.step))
    return range.positions > 0 ? range : nil
  }

  /// The zoom controls the driver has beside ZOOM_ABSOLUTE, by V4L2's names, for the probe report.
  var otherZoomControls: [String] {
    [("zoom_relative", CV4L2_CID_ZOOM_RELATIVE()), ("zoom_continuous", CV4L2_CID_ZOOM_CONTINUOUS())]
      .compactMap { queryControl($0.1) == nil ? nil : $0.0 }
  }

  /// Sets ZOOM_ABSOLUTE.
  func setZoom(_ value: Int) throws(CameraError) {
    var control = v4l2_control(id: CV4L2_CID_ZOOM_ABSOLUTE(), value: Int32(value))
    try self.control("VIDIOC_S_CTRL", CV4L2_VIDIOC_S_CTRL(), &control)
  }
}

extension CameraZoomRange {
  /// How `kioskcam probe` says what zoom a camera has: "camera control 100..500" or "digital only", and the
  /// zoom controls that are there but not used.
  static func summary(_ range: CameraZoomRange?, others: [String]) -> String {
    (range?.description ?? "digital only") + (others.isEmpty ? "" : " (\(others.joined(separator: ", ")) not used)")
  }
}
