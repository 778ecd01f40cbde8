import CYUV
import Imaging

/// A decoded video picture (4:2:0, limited range, BT.601: what kioskcam records) as XRGB pixels for the
/// review screen's scaler, through libyuv.
public enum DecodedPictures {
  /// Little-endian B, G, R, X bytes, `width * 4` a row: DRM's XRGB8888, libyuv's ARGB.
  public static func xrgb(_ picture: YCbCrPlaneView) -> [UInt8] {
    var pixels = [UInt8](repeating: 0, count: picture.width * picture.height * 4)
    pixels.withUnsafeMutableBufferPointer { out in
      _ = I420ToARGB(
        picture.luma, Int32(picture.lumaStride), picture.cb, Int32(picture.chromaStride), picture.cr,
        Int32(picture.chromaStride), out.baseAddress, Int32(picture.width * 4), Int32(picture.width), Int32(picture.height))
    }
    return pixels
  }
}
