#if canImport(Glibc)
  import Glibc
#endif
import CV4L2
import LinuxIO

/// One mmap'ed plane of a codec buffer, unmapped with its owner.
final class MappedPlane {
  let base: UnsafeMutableRawPointer
  let length: Int

  init(device: CodecDevice, length: Int, offset: UInt32) throws(CodecDeviceError) {
    guard let pointer = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, device.raw, off_t(offset)),
      pointer != MAP_FAILED
    else { throw CodecDeviceError(device.path, SystemCallError("mmap", Errno.current)) }
    base = pointer
    self.length = length
  }

  deinit { munmap(base, length) }
}

/// A buffer as it came back from the driver.
struct Dequeued {
  let index: Int
  let bytesUsed: [Int]
  let timestamp: timeval
  let flags: UInt32

  var isLast: Bool { flags & UInt32(V4L2_BUF_FLAG_LAST) != 0 }
  var isKeyframe: Bool { flags & UInt32(V4L2_BUF_FLAG_KEYFRAME) != 0 }
  var isError: Bool { flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0 }
}

/// One of a codec's two queues (OUTPUT: what goes in; CAPTURE: what comes out), multi-planar, with mmap
/// buffers. It knows which buffers the driver holds, so the codec never queues one twice or waits for one it
/// does not have.
final class PlaneQueue {
  let type: v4l2_buf_type
  private let device: CodecDevice
  private(set) var planes: [[MappedPlane]] = []
  /// Buffers the client holds (free to fill, or to give back).
  private(set) var free: [Int] = []
  private(set) var streaming = false

  init(_ device: CodecDevice, type: v4l2_buf_type) {
    self.device = device
    self.type = type
  }

  var name: String { type == V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE ? "OUTPUT" : "CAPTURE" }
  var count: Int { planes.count }
  var held: Int { planes.count - free.count }

  /// Asks for `count` buffers (the driver may give more or fewer) and maps every plane.
  func allocate(_ count: Int) throws(CodecDeviceError) {
    var request = v4l2_requestbuffers()
    request.count = UInt32(count)
    request.type = type.rawValue
    request.memory = V4L2_MEMORY_MMAP.rawValue
    try device.control("VIDIOC_REQBUFS \(name)", CV4L2_VIDIOC_REQBUFS(), &request)
    guard request.count > 0 else { throw CodecDeviceError(device.path, "VIDIOC_REQBUFS \(name) gave no buffers") }
    var mapped: [[MappedPlane]] = []
    for index in 0..<Int(request.count) {
      var planeInfo = [v4l2_plane](repeating: v4l2_plane(), count: Int(VIDEO_MAX_PLANES))
      var buffer = v4l2_buffer()
      buffer.index = UInt32(index)
      buffer.type = type.rawValue
      buffer.memory = V4L2_MEMORY_MMAP.rawValue
      buffer.length = UInt32(planeInfo.count)
      let failure = planeInfo.withUnsafeMutableBufferPointer { pointer in
        buffer.m.planes = pointer.baseAddress
        return device.attempt(CV4L2_VIDIOC_QUERYBUF(), &buffer)
      }
      if let failure { throw CodecDeviceError(device.path, SystemCallError("VIDIOC_QUERYBUF \(name)", failure)) }
      var row: [MappedPlane] = []
      for plane in planeInfo.prefix(Int(buffer.length)) {
        row.append(try MappedPlane(device: device, length: Int(plane.length), offset: plane.m.mem_offset))
      }
      mapped.append(row)
    }
    planes = mapped
    free = Array(0..<mapped.count)
  }

  /// Hands buffer `index` to the driver, with the bytes used in each plane and the timestamp that the codec
  /// copies to the buffer it makes from this one.
  func queue(_ index: Int, bytesUsed: [Int], timestamp: timeval = timeval(), flags: UInt32 = 0) throws(CodecDeviceError) {
    var planeInfo = [v4l2_plane](repeating: v4l2_plane(), count: planes[index].count)
    for (plane, used) in zip(planeInfo.indices, bytesUsed) {
      planeInfo[plane].bytesused = UInt32(used)
      planeInfo[plane].length = UInt32(planes[index][plane].length)
    }
    var buffer = v4l2_buffer()
    buffer.index = UInt32(index)
    buffer.type = type.rawValue
    buffer.memory = V4L2_MEMORY_MMAP.rawValue
    buffer.timestamp = timestamp
    buffer.flags = flags
    buffer.length = UInt32(planeInfo.count)
    let failure = planeInfo.withUnsafeMutableBufferPointer { pointer in
      buffer.m.planes = pointer.baseAddress
      return device.attempt(CV4L2_VIDIOC_QBUF(), &buffer)
    }
    if let failure { throw CodecDeviceError(device.path, SystemCallError("VIDIOC_QBUF \(name)", failure)) }
    free.removeAll { $0 == index }
  }

  /// Takes back one buffer the driver has finished with, or nil when none is ready yet. EPIPE (asked past
  /// the last buffer of a drain) is reported as `.pipe`.
  func dequeue() throws(CodecDeviceError) -> DequeueResult {
    guard held > 0 else { return .none }
    var planeInfo = [v4l2_plane](repeating: v4l2_plane(), count: Int(VIDEO_MAX_PLANES))
    var buffer = v4l2_buffer()
    buffer.type = type.rawValue
    buffer.memory = V4L2_MEMORY_MMAP.rawValue
    buffer.length = UInt32(planeInfo.count)
    let failure = planeInfo.withUnsafeMutableBufferPointer { pointer in
      buffer.m.planes = pointer.baseAddress
      return device.attempt(CV4L2_VIDIOC_DQBUF(), &buffer)
    }
    switch failure {
    case nil: break
    case .wouldBlock?: return .none
    case Errno(EPIPE)?: return .pipe
    case let error?: throw CodecDeviceError(device.path, SystemCallError("VIDIOC_DQBUF \(name)", error))
    }
    free.append(Int(buffer.index))
    return .buffer(
      Dequeued(
        index: Int(buffer.index), bytesUsed: planeInfo.prefix(Int(buffer.length)).map { Int($0.bytesused) },
        timestamp: buffer.timestamp, flags: buffer.flags))
  }

  enum DequeueResult {
    case none, pipe
    case buffer(Dequeued)
  }

  func streamOn() throws(CodecDeviceError) {
    var kind = CInt(type.rawValue)
    try device.control("VIDIOC_STREAMON \(name)", CV4L2_VIDIOC_STREAMON(), &kind)
    streaming = true
  }

  /// Stops the queue: the driver gives every buffer back, dropping what it held (a stream abandoned midway).
  func streamOff() {
    var kind = CInt(type.rawValue)
    _ = device.attempt(CV4L2_VIDIOC_STREAMOFF(), &kind)
    streaming = false
    free = Array(0..<planes.count)
  }

  /// Unmaps every buffer and gives the driver's memory back (REQBUFS 0), so the next stream can allocate.
  func release() {
    if streaming { streamOff() }
    planes = []
    free = []
    var request = v4l2_requestbuffers()
    request.count = 0
    request.type = type.rawValue
    request.memory = V4L2_MEMORY_MMAP.rawValue
    _ = device.attempt(CV4L2_VIDIOC_REQBUFS(), &request)
  }
}

extension timeval {
  /// A capture time in nanoseconds, as the codec carries it: to the microsecond.
  init(nanoseconds: Int64) {
    self.init(tv_sec: Int(nanoseconds / 1_000_000_000), tv_usec: Int(nanoseconds % 1_000_000_000 / 1000))
  }
  var nanoseconds: Int64 { Int64(tv_sec) * 1_000_000_000 + Int64(tv_usec) * 1000 }
}
