import Camera
import Imaging
import KioskCore
import LinuxIO

/// A libcamera camera as the camera session streams it: the same buffers, format, timestamps and errors as a
/// V4L2 `CameraStream`, so the preview, still and movie paths take its frames as they take a webcam's.
///
/// What it translates: a failed frame is given back to libcamera and never lent out (its bytes and often its
/// sequence number mean nothing); NV12, which libcamera hands out as two planes, is lent as the one run of
/// bytes (luma rows, then chroma rows at the same stride) that the frame paths read, copied together only when
/// the chroma plane does not lie straight after the luma; the sensor's timestamp becomes the frame's instant.
public final class LibcameraCaptureStream {
  /// libcamera's camera id.
  public let path: String
  /// properties::Model, else the id: the still's EXIF Model.
  public let card: String
  public let format: StreamFormat
  /// The sensor crop (controls::ScalerCrop) as a zoom range, where the pipeline has it (a Pi's does); nil for
  /// the others, which zoom digitally as a webcam without a zoom control does.
  public var zoomControl: CameraZoomRange? { sensorCrop?.range }
  /// Frames libcamera completed as failed or cancelled, given back without being lent out.
  public private(set) var failedFrames = 0

  private let stream: LibcameraStream
  private let frameRate: Int
  /// Each buffer's NV12 copied into one run, for buffers whose chroma does not follow their luma; else nil.
  private(set) var gathered: [[UInt8]?]
  private var controls: (exposure100Microseconds: Int?, gain: Int?) = (nil, nil)
  private var streaming = false
  private let sensorCrop: SensorCrop?
  /// The sensor crop every request asks for from now on; nil leaves the pipeline's default.
  private(set) var crop: (x: Int, y: Int, width: Int, height: Int)?

  public init(
    _ manager: LibcameraManager, camera: LibcameraCameraInfo, choice: LibcameraStreamChoice, frameRate: Int,
    bufferCount: Int = CameraStream.bufferCount
  ) throws(CameraError) {
    stream = try LibcameraStream(manager, id: camera.id, choice: choice, bufferCount: bufferCount)
    path = camera.id
    card = camera.model.isEmpty ? camera.id : camera.model
    self.frameRate = frameRate
    let granted = stream.granted
    let name = FourCC(code: granted.fourcc).description
    guard let pixelFormat = Self.pixelFormat(fourcc: name) else {
      throw .unsupported("libcamera: \(camera.id): asked for \(choice.format), granted \(name), which kioskcam does not read")
    }
    format = StreamFormat(
      format: pixelFormat, width: Int(granted.width), height: Int(granted.height), bytesPerLine: Int(granted.stride),
      imageSize: Int(granted.frame_size), range: granted.full_range != 0 ? .full : .limited)
    sensorCrop = SensorCrop(granted)
    let count = Int(granted.buffer_count)
    gathered = Array(repeating: nil, count: count)
    if pixelFormat == .nv12 {
      let layout = NV12Run(stride: format.bytesPerLine, height: format.height)
      for index in 0..<count where !layout.isOneRun(stream.mappedPlanes(ofBuffer: index)) {
        gathered[index] = [UInt8](repeating: 0, count: layout.luma + layout.chroma)
      }
    }
  }

  /// libcamera's fourcc (as the probe spells it) as one of the formats the frame paths read; nil for any other
  /// (YUV420's three planes, Bayer).
  static func pixelFormat(fourcc: String) -> PixelFormat? {
    switch fourcc {
    case "NV12": .nv12
    case "YUYV": .yuyv
    case "MJPG": .mjpeg
    default: nil
    }
  }

  /// Readable when a frame completed or the camera went away.
  public var descriptor: FileDescriptor { stream.descriptor }

  public func start() throws(CameraError) {
    try stream.start(frameRate: frameRate, crop: crop)
    streaming = true
  }

  /// The next good frame, nil when none is waiting; `.unplugged` once libcamera says the camera went away.
  public func dequeue() throws(CameraError) -> DequeuedBuffer? {
    while let frame = try stream.dequeue() {
      guard frame.complete else {
        failedFrames += 1
        try stream.requeue(frame, crop: crop)
        continue
      }
      let index = frame.index
      let bytesUsed = lend(index, used: frame.bytesUsed)
      if let exposure = frame.exposureMicroseconds { controls.exposure100Microseconds = (exposure + 50) / 100 }
      if let gain = frame.analogueGain { controls.gain = Int((gain * 100).rounded()) }
      // The pipelines' SensorTimestamp is the V4L2 buffer's, on CLOCK_MONOTONIC: the button edges' clock.
      let instant = Instant(nanoseconds: Int64(clamping: frame.timestampNanoseconds))
      return DequeuedBuffer(
        index: index, bytesUsed: bytesUsed, info: FrameInfo(sequence: frame.sequence, timestamp: instant),
        damaged: false)
    }
    return nil
  }

  /// The bytes a consumer may read of buffer `index`, NV12 gathered first where it must be.
  private func lend(_ index: Int, used: [Int]) -> Int {
    guard format.format == .nv12 else { return used.first ?? 0 }
    let layout = NV12Run(stride: format.bytesPerLine, height: format.height)
    let planes = stream.planes(ofBuffer: index, used: used)
    guard gathered[index] != nil else { return layout.bytesUsed(planes) }
    return gathered[index]!.withUnsafeMutableBytes { layout.gather(planes, into: $0) }
  }

  /// The frame's bytes as one run, valid until the buffer is requeued.
  public func withBytes<Result>(of buffer: borrowing DequeuedBuffer, _ body: (UnsafeRawBufferPointer) -> Result)
    -> Result
  {
    if let copy = gathered[buffer.index] {
      return copy.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<min($0.count, buffer.bytesUsed)])) }
    }
    let planes = stream.mappedPlanes(ofBuffer: buffer.index)
    guard let base = planes.first?.baseAddress else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
    // NV12 not gathered has its chroma straight after its luma (seen at open): the run ends with the chroma.
    let end = format.format == .nv12 && planes.count > 1 ? planes[1].baseAddress! + planes[1].count : base + planes[0].count
    return body(UnsafeRawBufferPointer(start: base, count: min(buffer.bytesUsed, end - base)))
  }

  /// Gives the buffer back, asking for the zoom's sensor crop: a change reaches the frames of the requests
  /// queued after it, a few frames later (those libcamera holds keep the crop they were queued with).
  public func requeue(_ buffer: consuming DequeuedBuffer) throws(CameraError) {
    try stream.queue(buffer.index, crop: crop)
  }

  /// The last good frame's exposure (controls::ExposureTime, in 100 µs) and analogue gain (controls::AnalogueGain,
  /// in hundredths), where the pipeline reports them: a Pi's does, uvcvideo's does not.
  public func exposureAndGain() -> (exposure100Microseconds: Int?, gain: Int?) { controls }

  /// Sets the sensor crop to `value` (a magnification in hundredths, `zoomControl`'s units) for the requests
  /// queued from now on. 1.0x is asked for as the widest crop, not left out: a pipeline keeps the last
  /// ScalerCrop it was given.
  public func setZoom(_ value: Int) throws(CameraError) {
    guard let sensorCrop else { throw .unsupported("libcamera: \(path): no ScalerCrop") }
    crop = sensorCrop.rectangle(hundredths: value)
  }

  public func stop() {
    guard streaming else { return }
    try? stream.stop()
    streaming = false
  }
}

/// NV12 as the frame paths read it: `height` rows of luma at `stride`, then (height + 1) / 2 rows of interleaved
/// chroma at the same stride, in one run of bytes. libcamera describes it as two planes, which its allocators
/// usually put in one dmabuf with the chroma straight after the luma (then the run is there already).
struct NV12Run: Equatable {
  let stride: Int
  let height: Int
  var luma: Int { stride * height }
  var chroma: Int { stride * ((height + 1) / 2) }

  /// Whether `planes` (as mapped) already are the run: one plane, or the chroma straight after the luma rows.
  func isOneRun(_ planes: [UnsafeRawBufferPointer]) -> Bool {
    guard planes.count > 1 else { return true }
    guard let luma = planes[0].baseAddress, let chroma = planes[1].baseAddress else { return false }
    return chroma == luma + self.luma
  }

  /// The bytes of the run a frame filled: short of the whole when a plane is (so the frame check says so).
  func bytesUsed(_ planes: [UnsafeRawBufferPointer]) -> Int {
    guard planes.count > 1 else { return planes.first?.count ?? 0 }
    guard planes[0].count >= luma else { return planes[0].count }
    return luma + min(planes[1].count, chroma)
  }

  /// Copies the luma rows and the chroma rows into `run`; the bytes filled.
  func gather(_ planes: [UnsafeRawBufferPointer], into run: UnsafeMutableRawBufferPointer) -> Int {
    guard planes.count > 1 else { return 0 }
    let lumaBytes = min(planes[0].count, luma)
    run.baseAddress!.copyMemory(from: planes[0].baseAddress!, byteCount: lumaBytes)
    guard lumaBytes == luma else { return lumaBytes }
    let chromaBytes = min(planes[1].count, chroma)
    (run.baseAddress! + luma).copyMemory(from: planes[1].baseAddress!, byteCount: chromaBytes)
    return luma + chromaBytes
  }
}
