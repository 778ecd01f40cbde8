import CLibcameraShim
import Camera

/// libcamera's camera manager: started on creation, stopped on deinit. libcamera allows one a process, so the
/// probe makes one and lets it go, and an open camera keeps its manager alive.
public final class LibcameraManager {
  public let library: LibcameraLibrary
  let handle: OpaquePointer

  public init(_ library: LibcameraLibrary) throws(CameraError) {
    self.library = library
    var made: OpaquePointer?
    try LibcameraCall.check { library.api.kioskcam_lc_manager_create(&made, $0, $1) }
    handle = made!
  }

  deinit { library.api.kioskcam_lc_manager_destroy(handle) }

  /// Every camera libcamera has now, described.
  public func cameras() throws(CameraError) -> [LibcameraCameraInfo] {
    let count = library.api.kioskcam_lc_camera_count(handle)
    var result: [LibcameraCameraInfo] = []
    for position in 0..<UInt32(max(0, count)) {
      var info = kioskcam_lc_camera_info()
      try LibcameraCall.check { library.api.kioskcam_lc_camera_describe(handle, position, &info, $0, $1) }
      result.append(LibcameraCameraInfo(info))
    }
    return result
  }
}
