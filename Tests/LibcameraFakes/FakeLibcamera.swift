#if canImport(Glibc)
  import Glibc
#endif
import CLibcameraShim
import KioskCore
import LibcameraCamera
import LinuxIO

/// libcamera as a test scripts it, behind the shim's own C function table: the adapter and the service run
/// their real code (the table's calls, the dmabuf mappings, the errors) against cameras that a test lists,
/// completes frames on, and pulls.
///
/// The table's functions are C function pointers, which carry no context: the camera manager a
/// `kioskcam_lc_manager_create` makes is the fake installed on the calling thread (`installed`), and every
/// other call finds its fake through the handle it is given. Buffers are unlinked temporary files, mapped by
/// the adapter as it maps dmabufs.
public final class FakeLibcamera {
  fileprivate static let versionText: StaticString = "v0.4.0-fake"
  /// The version the fake's libcamera reports.
  public static var version: String { versionText.description }
  /// The cameras listed now, in libcamera's order.
  public var cameras: [FakeLibcameraCamera] = []
  /// Camera managers made over the fake's life, and whether one exists now (libcamera allows one a process).
  public private(set) var managersMade = 0
  public private(set) var managerExists = false

  public init(cameras: [FakeLibcameraCamera] = []) { self.cameras = cameras }

  /// The shim as `LibcameraLibrary.load` would give it, its functions the fake's.
  public var library: LibcameraLibrary { LibcameraLibrary(path: "/fake/libkioskcam-libcamera.so", api: fakeTable) }

  /// Runs `body` with this fake as the libcamera that `kioskcam_lc_manager_create` reaches from this thread.
  public func installed<Result>(_ body: () throws -> Result) rethrows -> Result {
    let previous = pthread_getspecific(installedKey)
    pthread_setspecific(installedKey, Unmanaged.passUnretained(self).toOpaque())
    defer { pthread_setspecific(installedKey, previous) }
    return try body()
  }

  fileprivate static var onThisThread: FakeLibcamera? {
    pthread_getspecific(installedKey).map { Unmanaged<FakeLibcamera>.fromOpaque($0).takeUnretainedValue() }
  }

  /// libcamera's camera-removed: `camera` leaves the listing, and its open stream hears it is gone.
  public func unplug(_ camera: FakeLibcameraCamera) {
    cameras.removeAll { $0 === camera }
    camera.unplug()
  }

  fileprivate func made() {
    managersMade += 1
    managerExists = true
  }

  fileprivate func destroyed() { managerExists = false }
}

private let installedKey: pthread_key_t = {
  var key = pthread_key_t()
  pthread_key_create(&key, nil)
  return key
}()

/// What a fake frame completes as (KIOSKCAM_LC_FRAME_*).
public enum FakeFrameStatus: UInt32, Sendable {
  case success = 0, error = 1, cancelled = 2
}

/// One camera of the fake: what it offers, and, while open, its buffers, the requests queued, the frames done.
public final class FakeLibcameraCamera {
  public let info: LibcameraCameraInfo
  /// NV12's chroma in a file of its own rather than straight after the luma (as libcamera's allocators put it).
  public var chromaApart = false
  /// Bytes of padding at the end of each luma and chroma row (a stride wider than the picture).
  public var rowPadding = 0
  /// What configure grants instead of the format asked (a fourcc as the probe spells it: YU12...).
  public var grantFourcc: String?
  public var grantFullRange = false
  /// controls::ScalerCrop's default crop and smallest size, as configure reports them (a Pi's sensor); nil:
  /// the camera has no ScalerCrop.
  public var scalerCrop: (widest: kioskcam_lc_rect, smallest: kioskcam_lc_size)?
  public var openStatus: CInt = 0

  public private(set) var isOpen = false
  public private(set) var started = false
  public private(set) var frameRate: UInt32 = 0
  /// Buffers libcamera holds now, in the order they were queued (the order it completes them in).
  public private(set) var queued: [Int] = []
  /// The ScalerCrop each queue asked for, in the order of the queues (nil: none).
  public private(set) var queuedCrops: [kioskcam_lc_rect?] = []
  public private(set) var granted = kioskcam_lc_stream()
  /// Each buffer's planes: the file, where the plane starts in it, and its length.
  public private(set) var planes: [[kioskcam_lc_plane]] = []
  private var files: [CInt] = []
  private var done: [kioskcam_lc_frame] = []
  private var removed = false
  private var wake: [CInt] = [-1, -1]

  public init(_ info: LibcameraCameraInfo) { self.info = info }

  /// The read end the adapter watches: readable while a frame is done or the camera is gone.
  public var eventfd: CInt { wake[0] }

  /// Completes the oldest queued buffer with `planes`' bytes (each written into its plane); its index.
  @discardableResult
  public func complete(
    sequence: UInt32, timestampNanoseconds: UInt64, planes bytes: [[UInt8]], status: FakeFrameStatus = .success,
    sensorTimestamp: Bool = true, exposureMicroseconds: Int32 = -1, analogueGain: Float = 0
  ) -> Int? {
    guard !queued.isEmpty else { return nil }
    let index = queued.removeFirst()
    var frame = kioskcam_lc_frame()
    frame.index = UInt32(index)
    frame.status = status.rawValue
    frame.sequence = sequence
    frame.plane_count = UInt32(bytes.count)
    withUnsafeMutableBytes(of: &frame.bytes_used) { raw in
      for (plane, written) in bytes.enumerated() { raw.storeBytes(of: UInt32(written.count), toByteOffset: plane * 4, as: UInt32.self) }
    }
    for (plane, written) in zip(planes[index], bytes) {
      _ = written.withUnsafeBytes { pwrite(plane.fd, $0.baseAddress, $0.count, off_t(plane.offset)) }
    }
    frame.timestamp_ns = timestampNanoseconds
    frame.sensor_timestamp = sensorTimestamp ? 1 : 0
    frame.exposure_us = exposureMicroseconds
    frame.analogue_gain = analogueGain
    done.append(frame)
    signal()
    return index
  }

  /// libcamera's disconnected signal: the camera is gone, and the next dequeue with nothing left says so.
  public func unplug() {
    removed = true
    signal()
  }

  private func signal() {
    var one: UInt8 = 1
    _ = write(wake[1], &one, 1)
  }

  private func drain() {
    var bytes = [UInt8](repeating: 0, count: 64)
    while read(wake[0], &bytes, bytes.count) > 0 {}
  }

  fileprivate func open() -> CInt {
    if openStatus != 0 { return openStatus }
    if isOpen { return -EBUSY }
    guard pipe(&wake) == 0 else { return -errno }
    _ = fcntl(wake[0], F_SETFL, O_NONBLOCK)
    isOpen = true
    return 0
  }

  fileprivate func close() {
    for file in files { _ = Glibc.close(file) }
    files = []
    _ = Glibc.close(wake[0])
    _ = Glibc.close(wake[1])
    isOpen = false
    started = false
    queued = []
    done = []
  }

  fileprivate func configure(fourcc asked: UInt32, width: Int, height: Int, count: Int) -> CInt {
    let name = grantFourcc ?? FourCC(code: asked).description
    let code = name.utf8.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    let stride: Int
    let lengths: [Int]
    switch name {
    case "NV12": (stride, lengths) = (width + rowPadding, [(width + rowPadding) * height, (width + rowPadding) * ((height + 1) / 2)])
    case "YUYV": (stride, lengths) = (width * 2 + rowPadding, [(width * 2 + rowPadding) * height])
    case "YU12": (stride, lengths) = (width, [width * height, width * height / 4, width * height / 4])
    default: (stride, lengths) = (0, [width * height * 2])
    }
    granted = kioskcam_lc_stream(
      fourcc: code, width: UInt32(width), height: UInt32(height), stride: UInt32(stride),
      frame_size: UInt32(lengths.reduce(0, +)), buffer_count: UInt32(count), full_range: grantFullRange ? 1 : 0,
      crop_default: scalerCrop?.widest ?? kioskcam_lc_rect(), crop_minimum: scalerCrop?.smallest ?? kioskcam_lc_size())
    planes = []
    for _ in 0..<count {
      var buffer: [kioskcam_lc_plane] = []
      var file = temporaryFile(length: lengths.reduce(0, +))
      var offset = 0
      for (plane, length) in lengths.enumerated() {
        if plane > 0, chromaApart {
          file = temporaryFile(length: length)
          offset = 0
        }
        buffer.append(kioskcam_lc_plane(fd: file, offset: UInt32(offset), length: UInt32(length)))
        offset += length
      }
      planes.append(buffer)
    }
    return 0
  }

  private func temporaryFile(length: Int) -> CInt {
    var template = Array("/tmp/kioskcam-fake-buffer-XXXXXX".utf8CString)
    let file = mkstemp(&template)
    unlink(template)
    _ = ftruncate(file, off_t(max(length, 1)))
    files.append(file)
    return file
  }

  fileprivate func start(frameRate: UInt32) -> CInt {
    started = true
    self.frameRate = frameRate
    return 0
  }

  fileprivate func queue(_ index: Int, crop: kioskcam_lc_rect?) -> CInt {
    guard index < planes.count else { return -EINVAL }
    // As the real shim refuses it: a buffer given back twice is a bug in the adapter.
    guard !queued.contains(index) else { return -EBUSY }
    queued.append(index)
    queuedCrops.append(crop)
    return 0
  }

  fileprivate func dequeue(_ frame: UnsafeMutablePointer<kioskcam_lc_frame>) -> CInt {
    guard !done.isEmpty else {
      if removed { return -ENODEV }
      drain()
      return -EAGAIN
    }
    frame.pointee = done.removeFirst()
    if done.isEmpty, !removed { drain() }
    return 0
  }
}

// MARK: The table

private func fail(_ error: UnsafeMutablePointer<CChar>?, _ size: Int, _ status: CInt, _ message: String) -> CInt {
  guard let error, size > 0 else { return status }
  let bytes = Array(message.utf8.prefix(size - 1))
  for (offset, byte) in bytes.enumerated() { error[offset] = CChar(bitPattern: byte) }
  error[bytes.count] = 0
  return status
}

private func fake(_ manager: OpaquePointer?) -> FakeLibcamera {
  Unmanaged<FakeLibcamera>.fromOpaque(UnsafeRawPointer(manager!)).takeUnretainedValue()
}

private func camera(_ handle: OpaquePointer?) -> FakeLibcameraCamera {
  Unmanaged<FakeLibcameraCamera>.fromOpaque(UnsafeRawPointer(handle!)).takeUnretainedValue()
}

/// Writes `text` into a C char array, cut to fit and terminated.
private func copy<Array>(_ text: String, into array: inout Array) {
  withUnsafeMutableBytes(of: &array) { raw in
    let bytes = text.utf8.prefix(raw.count - 1)
    raw.copyBytes(from: bytes)
    raw[bytes.count] = 0
  }
}

private func describe(_ camera: LibcameraCameraInfo, into info: inout kioskcam_lc_camera_info) {
  copy(camera.id, into: &info.id)
  copy(camera.model, into: &info.model)
  info.location = ["front": 0, "back": 1, "external": 2][camera.location ?? ""] ?? -1
  info.has_scaler_crop = camera.scalerCrop ? 1 : 0
  info.has_af_trigger = camera.autofocus ? 1 : 0
  info.format_count = UInt32(camera.formats.count)
  withUnsafeMutableBytes(of: &info.formats) { raw in
    let formats = raw.bindMemory(to: kioskcam_lc_format.self)
    for (position, format) in camera.formats.enumerated() {
      formats[position].fourcc = format.fourcc.utf8.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
      copy(format.name, into: &formats[position].name)
      formats[position].range = format.sizeRange ? 1 : 0
      formats[position].size_count = UInt32(format.sizes.count)
      withUnsafeMutableBytes(of: &formats[position].sizes) { sizes in
        for (index, size) in format.sizes.compactMap({ Size(parsing: $0) }).enumerated() {
          sizes.storeBytes(of: UInt32(size.width), toByteOffset: index * 8, as: UInt32.self)
          sizes.storeBytes(of: UInt32(size.height), toByteOffset: index * 8 + 4, as: UInt32.self)
        }
      }
    }
  }
}

private let fakeTable = kioskcam_lc_api(
  kioskcam_lc_abi: { kioskcam_lc_expected_abi() },
  kioskcam_lc_version: {
    UnsafeRawPointer(FakeLibcamera.versionText.utf8Start).assumingMemoryBound(to: CChar.self)
  },
  kioskcam_lc_manager_create: { result, error, size in
    guard let installed = FakeLibcamera.onThisThread else {
      return fail(error, size, -ENODEV, "fake libcamera: none installed on this thread")
    }
    guard !installed.managerExists else {
      return fail(error, size, -EBUSY, "libcamera: one camera manager a process, and one exists")
    }
    installed.made()
    result!.pointee = OpaquePointer(Unmanaged.passRetained(installed).toOpaque())
    return 0
  },
  kioskcam_lc_manager_destroy: { manager in
    let unmanaged = Unmanaged<FakeLibcamera>.fromOpaque(UnsafeRawPointer(manager!))
    unmanaged.takeUnretainedValue().destroyed()
    unmanaged.release()
  },
  kioskcam_lc_camera_count: { manager in CInt(fake(manager).cameras.count) },
  kioskcam_lc_camera_describe: { manager, position, info, error, size in
    let cameras = fake(manager).cameras
    guard Int(position) < cameras.count else { return fail(error, size, -ENODEV, "libcamera: camera \(position) is gone") }
    info!.pointee = kioskcam_lc_camera_info()
    describe(cameras[Int(position)].info, into: &info!.pointee)
    return 0
  },
  kioskcam_lc_camera_open: { manager, id, result, error, size in
    let wanted = String(cString: id!)
    guard let found = fake(manager).cameras.first(where: { $0.info.id == wanted }) else {
      return fail(error, size, -ENOENT, "libcamera: no camera \(wanted)")
    }
    let status = found.open()
    guard status == 0 else { return fail(error, size, status, "libcamera: acquire \(wanted): \(String(cString: strerror(-status)))") }
    result!.pointee = OpaquePointer(Unmanaged.passRetained(found).toOpaque())
    return 0
  },
  kioskcam_lc_camera_close: { handle in
    let unmanaged = Unmanaged<FakeLibcameraCamera>.fromOpaque(UnsafeRawPointer(handle!))
    unmanaged.takeUnretainedValue().close()
    unmanaged.release()
  },
  kioskcam_lc_camera_configure: { handle, fourcc, width, height, count, granted, error, size in
    let fake = camera(handle)
    let status = fake.configure(fourcc: fourcc, width: Int(width), height: Int(height), count: count == 0 ? 4 : Int(count))
    granted!.pointee = fake.granted
    return status
  },
  kioskcam_lc_buffer_planes: { handle, index, planes, count, error, size in
    let buffers = camera(handle).planes
    guard Int(index) < buffers.count else { return fail(error, size, -EINVAL, "libcamera: no buffer \(index)") }
    for (position, plane) in buffers[Int(index)].enumerated() { planes![position] = plane }
    count!.pointee = UInt32(buffers[Int(index)].count)
    return 0
  },
  kioskcam_lc_camera_eventfd: { handle in camera(handle).eventfd },
  kioskcam_lc_camera_start: { handle, rate, error, size in camera(handle).start(frameRate: rate) },
  kioskcam_lc_camera_queue: { handle, index, crop, error, size in
    let status = camera(handle).queue(Int(index), crop: crop?.pointee)
    return status == 0 ? 0 : fail(error, size, status, "libcamera: buffer \(index) is queued")
  },
  kioskcam_lc_camera_dequeue: { handle, frame, error, size in
    let fake = camera(handle)
    let status = fake.dequeue(frame!)
    guard status == -ENODEV else { return status }
    return fail(error, size, status, "libcamera: \(fake.info.id): camera removed")
  },
  kioskcam_lc_camera_stop: { handle, error, size in 0 }
)
