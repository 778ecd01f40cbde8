import CTurboJPEG
import Dispatch
import Imaging
import LinuxIO

/// The bands of one picture, each a JPEG of its own, decoded at once: the Huffman decoding that dominates a
/// large photo is single-threaded inside libjpeg, so a picture cut at restart markers is the way onto more cores.
public enum BandedJPEGDecoder {
  /// One band: its JPEG, and the first of the whole picture's rows it holds (a multiple of its MCU height).
  public struct Band: Sendable {
    public let jpeg: [UInt8]
    public let firstRow: Int

    public init(jpeg: [UInt8], firstRow: Int) {
      self.jpeg = jpeg
      self.firstRow = firstRow
    }
  }

  /// A `width` x `height` picture given as `bands` decoded to XRGB8888 at the DCT scale that still covers
  /// `targetWidth` x `targetHeight`, each band on a thread of its own, straight into its rows of the picture:
  /// what `JPEGDecoder.decodeXRGB` makes of the whole, but for the rows at a cut of a 4:2:0 picture, which
  /// libjpeg's smooth chroma upsampling sees without the neighbouring band's chroma row.
  public static func decodeXRGB(
    _ bands: [Band], width: Int, height: Int, covering targetWidth: Int, _ targetHeight: Int
  ) throws(JPEGError) -> XRGBImage {
    let denominator = DCTScale.denominator(width: width, height: height, targetWidth: targetWidth, targetHeight: targetHeight)
    let scaledWidth = (width + denominator - 1) / denominator
    let scaledHeight = (height + denominator - 1) / denominator
    var pixels = [UInt8](repeating: 0, count: scaledWidth * scaledHeight * 4)
    let failures = pixels.withUnsafeMutableBytes { out in
      let target = Target(base: out.baseAddress!)
      let failures = ParallelSlots<JPEGError>(count: bands.count)
      DispatchQueue.concurrentPerform(iterations: bands.count) { index in
        let band = bands[index]
        let firstRow = band.firstRow / denominator
        let rows = index + 1 < bands.count ? bands[index + 1].firstRow / denominator - firstRow : scaledHeight - firstRow
        do throws(JPEGError) {
          let handle = try TurboHandle(compressing: false)
          let status = band.jpeg.withUnsafeBufferPointer { jpeg in
            // tjDecompress2 picks the scaling factor from the requested size: the band's share of the whole's.
            tjDecompress2(
              handle.raw, jpeg.baseAddress, UInt(jpeg.count),
              target.base.assumingMemoryBound(to: UInt8.self) + firstRow * scaledWidth * 4, Int32(scaledWidth),
              Int32(scaledWidth * 4), Int32(rows), Int32(TJPF_BGRX.rawValue), 0)
          }
          if status != 0 { failures[index] = handle.error("tjDecompress2 (band \(index))") }
        } catch {
          failures[index] = error
        }
      }
      return failures.values.compactMap { $0 }
    }
    if let failure = failures.first { throw failure }
    return XRGBImage(width: scaledWidth, height: scaledHeight, denominator: denominator, pixels: pixels)
  }

  /// The picture's memory, written by each band's thread in rows of its own only.
  private struct Target: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
  }
}
