import Imaging
import JPEGCodec
import LinuxIO
import V4L2Codec

/// How a preview worker turns a compressed camera frame into YCbCr planes: TurboJPEG on the worker's core, or
/// a V4L2 memory-to-memory decoder (the Pi 4's bcm2835-codec takes MJPEG). One per worker, never shared.
public protocol FrameDecoder: AnyObject {
  /// Decodes `frame` at a scale that still covers `width` x `height` (or at its full size); the planes stay
  /// valid until the next call.
  func decode(_ frame: UnsafeRawBufferPointer, covering width: Int, _ height: Int) throws -> YCbCrPlaneView
  /// The scale of the last frame (1, 2, 4 or 8): what a zoom crop of it is divided by.
  var denominator: Int { get }
}

extension JPEGPlaneDecoder: FrameDecoder {}

/// Which decoder the preview's workers make for themselves.
public enum FrameDecoderChoice: Sendable, Equatable {
  case turboJPEG
  /// A memory-to-memory decoder node taking `coded` and giving YU12: each worker opens its own context on it.
  case v4l2(path: String, coded: FourCC)

  public func make() throws -> any FrameDecoder {
    switch self {
    case .turboJPEG: return try JPEGPlaneDecoder()
    case .v4l2(let path, let coded): return try V4L2FrameDecoder(path: path, coded: coded)
    }
  }
}

/// A V4L2 stateful decoder, one compressed frame at a time: each is queued and its picture waited for, so a
/// worker holds one frame as with TurboJPEG. Decodes at full size (the hardware scales nothing), into YU12.
public final class V4L2FrameDecoder: FrameDecoder {
  private let decoder: StatefulDecoder
  /// The last picture's planes, which the views handed out point into.
  private var storage: UnsafeMutablePointer<UInt8>?
  private var capacity = 0
  private var stamp: Int64 = 0
  public let denominator = 1

  public init(path: String, coded: FourCC) throws {
    // A 4 MB buffer holds any MJPEG frame up to 4K at camera qualities.
    decoder = try StatefulDecoder(path: path, coded: coded, raw: .yu12, codedBufferSize: 4 << 20)
  }

  deinit { storage?.deallocate() }

  public func decode(_ frame: UnsafeRawBufferPointer, covering width: Int, _ height: Int) throws -> YCbCrPlaneView {
    stamp += 1
    let decoded = try decoder.decodeWhole(Array(frame), timestamp: stamp)
    let layout = decoded.layout
    if decoded.bytes.count > capacity {
      storage?.deallocate()
      capacity = decoded.bytes.count
      storage = .allocate(capacity: capacity)
    }
    let base = storage!
    decoded.bytes.withUnsafeBufferPointer { base.update(from: $0.baseAddress!, count: $0.count) }
    // Unpacked YU12: the luma rows, then Cb's, then Cr's, each as wide as its plane.
    let (chromaWidth, chromaHeight) = ((layout.width + 1) / 2, (layout.height + 1) / 2)
    let lumaSize = layout.width * layout.height
    return YCbCrPlaneView(
      width: layout.width, height: layout.height, chromaWidth: chromaWidth, chromaHeight: chromaHeight, luma: base,
      cb: base + lumaSize, cr: base + lumaSize + chromaWidth * chromaHeight, lumaStride: layout.width,
      chromaStride: chromaWidth)
  }
}
