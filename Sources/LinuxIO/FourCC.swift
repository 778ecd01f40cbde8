/// A four-character code as V4L2 and DRM pack a pixel or coded format: the first character in the lowest byte
/// (`YU12`, `XR24`, `H264`). Both set bit 31 for a big-endian variant (V4L2's `v4l2_fourcc_be`,
/// `DRM_FORMAT_BIG_ENDIAN`). The one place a code becomes text and back, for the camera, libcamera, the
/// display's planes and the codecs alike.
public struct FourCC: Hashable, Sendable, CustomStringConvertible {
  public let code: UInt32
  public init(code: UInt32) { self.code = code }

  /// Four characters exactly; nil otherwise.
  public init?(_ text: String) {
    let bytes = Array(text.utf8)
    guard bytes.count == 4 else { return nil }
    code = bytes.enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
  }

  /// As v4l2-ctl prints it: the characters without trailing spaces (`Y10 ` is `Y10`), "-BE" for bit 31.
  public var description: String {
    let bigEndian = code & (1 << 31) != 0
    var bytes = (0..<4).map { UInt8(truncatingIfNeeded: (code & ~(1 << 31)) >> ($0 * 8)) }
    while bytes.last == UInt8(ascii: " ") { bytes.removeLast() }
    return String(decoding: bytes, as: UTF8.self) + (bigEndian ? "-BE" : "")
  }
}
