import Imaging
import Testing

@testable import Scaling

/// A still at 2.0x: the centre half of eight vertical bars fills the frame, so bars 2-5 (of 0-7) each take
/// a quarter of the width, at the frame's own size.
@Suite struct FrameZoomTests {
  static let lumas: [UInt8] = [180, 162, 131, 112, 84, 65, 35, 16]
  static let (width, height) = (640, 360)
  static let crop = PixelRect(x: 160, y: 90, width: 320, height: 180)

  @Test func yuyvBarsTwoToFiveFillTheFrame() {
    let (width, height) = (Self.width, Self.height)
    var frame = [UInt8](repeating: 128, count: width * 2 * height)
    for row in 0..<height { for x in 0..<width { frame[row * width * 2 + x * 2] = Self.lumas[x * 8 / width] } }
    let zoomed = FrameZoom.yuyv(frame, stride: width * 2, width: width, height: height, crop: Self.crop)
    #expect(zoomed.count == width * 2 * height)
    for quarter in 0..<4 {
      let x = quarter * width / 4 + width / 8
      for row in [0, height / 2, height - 1] {
        // libyuv's bilinear rounds down by up to a level or two.
        #expect(abs(Int(zoomed[row * width * 2 + x * 2]) - Int(Self.lumas[2 + quarter])) <= 2, "quarter \(quarter) row \(row)")
        #expect(abs(Int(zoomed[row * width * 2 + x * 2 + 1]) - 128) <= 2, "chroma kept")
      }
    }
  }

  @Test func nv12BarsTwoToFiveFillTheFrame() {
    let (width, height) = (Self.width, Self.height)
    var frame = [UInt8](repeating: 128, count: width * height * 3 / 2)
    // Bars in luma, and a chroma value per row pair that says which rows were kept.
    for row in 0..<height { for x in 0..<width { frame[row * width + x] = Self.lumas[x * 8 / width] } }
    for row in 0..<(height / 2) { for x in 0..<width { frame[width * height + row * width + x] = UInt8(row * 255 / (height / 2)) } }
    let zoomed = FrameZoom.nv12(frame, stride: width, width: width, height: height, crop: Self.crop)
    #expect(zoomed.count == width * height * 3 / 2)
    for quarter in 0..<4 {
      let x = quarter * width / 4 + width / 8
      #expect(abs(Int(zoomed[(height / 2) * width + x]) - Int(Self.lumas[2 + quarter])) <= 2, "quarter \(quarter)")
    }
    // The chroma rows shown span the crop's rows 90-270 of 360: the middle half of 0-255.
    let top = Int(zoomed[width * height + 0])
    let bottom = Int(zoomed[width * height + (height / 2 - 1) * width])
    #expect(abs(top - 63) <= 3 && abs(bottom - 190) <= 3, "chroma from rows \(top) to \(bottom)")
  }
}
