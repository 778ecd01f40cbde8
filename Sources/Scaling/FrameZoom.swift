import CYUV
import Imaging

/// Digital zoom of a saved frame: the centred crop scaled back up to the frame's own size, in the camera's
/// own packing, so the still pipeline and the file's size do not change with the zoom. Bilinear: a still
/// is looked at closely, and this runs once per photo on the writer's thread, not per preview frame.
public enum FrameZoom {
  /// A YUYV frame (`stride` bytes a row) cropped to `crop` (even coordinates) and scaled to `width` x `height`,
  /// packed with `width * 2` bytes a row.
  public static func yuyv(_ source: [UInt8], stride: Int, width: Int, height: Int, crop: PixelRect) -> [UInt8] {
    precondition(source.count >= stride * height && crop.x % 2 == 0 && crop.width % 2 == 0, "YUYV crop geometry")
    var out = [UInt8](repeating: 0, count: width * 2 * height)
    source.withUnsafeBufferPointer { input in
      out.withUnsafeMutableBufferPointer { output in
        // A macropixel (Y0 Cb Y1 Cr) is four bytes: scaled as ARGB pixels, each pair keeps its own chroma.
        _ = ARGBScale(input.baseAddress! + crop.y * stride + crop.x * 2, Int32(stride), Int32(crop.width / 2),
          Int32(crop.height), output.baseAddress, Int32(width * 2), Int32(width / 2), Int32(height), kFilterBilinear)
      }
    }
    return out
  }

  /// An NV12 frame (`stride` bytes a row for both planes) cropped and scaled back to `width` x `height`,
  /// with `width` bytes a row.
  public static func nv12(_ source: [UInt8], stride: Int, width: Int, height: Int, crop: PixelRect) -> [UInt8] {
    precondition(source.count >= stride * (height + (height + 1) / 2) && crop.x % 2 == 0 && crop.y % 2 == 0)
    let chromaRows = (height + 1) / 2
    var out = [UInt8](repeating: 0, count: width * (height + chromaRows))
    source.withUnsafeBufferPointer { input in
      out.withUnsafeMutableBufferPointer { output in
        let base = input.baseAddress!
        _ = NV12Scale(base + crop.y * stride + crop.x, Int32(stride), base + stride * height + (crop.y / 2) * stride + crop.x,
          Int32(stride), Int32(crop.width), Int32(crop.height), output.baseAddress, Int32(width),
          output.baseAddress! + width * height, Int32(width), Int32(width), Int32(height), kFilterBilinear)
      }
    }
    return out
  }

  /// Decoded JPEG planes (an MJPEG frame) cropped to `crop` (even coordinates, in luma pixels) and scaled back
  /// to their own size and chroma geometry, so the picture re-encodes with the camera's sampling.
  public static func planes(_ source: PlanarYCbCr, crop: PixelRect) -> PlanarYCbCr {
    precondition(crop.x % 2 == 0 && crop.y % 2 == 0 && crop.x + crop.width <= source.width && crop.y + crop.height <= source.height)
    // 4:4:4, 4:2:2, 4:2:0 and 4:4:0 halve a chroma side or keep it: even luma coordinates map exactly.
    let across = source.chromaWidth < source.width ? 2 : 1
    let down = source.chromaHeight < source.height ? 2 : 1
    func scaled(_ plane: [UInt8], width: Int, height: Int, _ x: Int, _ y: Int, _ cropWidth: Int, _ cropHeight: Int) -> [UInt8] {
      var out = [UInt8](repeating: 0, count: width * height)
      plane.withUnsafeBufferPointer { (input) -> Void in
        out.withUnsafeMutableBufferPointer { (output) -> Void in
          ScalePlane(input.baseAddress! + y * width + x, Int32(width), Int32(cropWidth), Int32(cropHeight),
            output.baseAddress, Int32(width), Int32(width), Int32(height), kFilterBilinear)
        }
      }
      return out
    }
    let (chromaX, chromaY) = (crop.x / across, crop.y / down)
    let chromaCropWidth = min((crop.width + across - 1) / across, source.chromaWidth - chromaX)
    let chromaCropHeight = min((crop.height + down - 1) / down, source.chromaHeight - chromaY)
    func chroma(_ plane: [UInt8]) -> [UInt8] {
      scaled(plane, width: source.chromaWidth, height: source.chromaHeight, chromaX, chromaY, chromaCropWidth, chromaCropHeight)
    }
    return PlanarYCbCr(
      width: source.width, height: source.height, chromaWidth: source.chromaWidth, chromaHeight: source.chromaHeight,
      luma: scaled(source.luma, width: source.width, height: source.height, crop.x, crop.y, crop.width, crop.height),
      cb: chroma(source.cb), cr: chroma(source.cr))
  }
}
