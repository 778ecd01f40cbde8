import Imaging
import JPEGCodec
import Testing

@Suite struct PlanarAndJPEGTests {
  @Test func yuyvSplitsIntoPlanes() {
    let frame: [UInt8] = [10, 20, 11, 30, 12, 21, 13, 31, /* padding */ 0, 0, 14, 22, 15, 32, 16, 23, 17, 33, 0, 0]
    let planes = frame.withUnsafeBytes { PlanarYUV422(yuyv: $0, width: 4, height: 2, stride: 10, range: .full) }
    #expect(planes.luma == [10, 11, 12, 13, 14, 15, 16, 17])
    #expect(planes.cb == [20, 21, 22, 23])
    #expect(planes.cr == [30, 31, 32, 33])
  }

  @Test func limitedRangeIsExpandedToJPEGsFullRange() {
    let frame: [UInt8] = [16, 16, 235, 240, 128, 128, 126, 128]
    let planes = frame.withUnsafeBytes { PlanarYUV422(yuyv: $0, width: 4, height: 1, stride: 8, range: .limited) }
    #expect(planes.luma == [0, 255, 130, 128])
    #expect(planes.cb == [0, 128])
    #expect(planes.cr == [255, 128])
  }

  @Test func aStillOfColourBarsDecodesToColourBars() throws {
    let bars = ColourBars(width: 640, height: 360)
    let planes = bars.bytes.withUnsafeBytes {
      PlanarYUV422(yuyv: $0, width: 640, height: 360, stride: bars.stride, range: .limited)
    }
    let jpeg = try JPEGEncoder.encode(planes, quality: 90)
    #expect(jpeg.prefix(2) == [0xFF, 0xD8], "starts with SOI")
    #expect(jpeg.suffix(2) == [0xFF, 0xD9], "ends with EOI")
    let image = try JPEGDecoder.decodeRGB(jpeg)
    #expect(image.width == 640 && image.height == 360)
    for bar in 0..<8 {
      let sample = image.pixel(x: ColourBars.centre(of: bar, width: 640), y: 180)
      #expect(near((Int(sample.r), Int(sample.g), Int(sample.b)), ColourBars.rgb[bar], tolerance: 6), "bar \(bar)")
    }
  }

  @Test func garbageIsAnErrorNotACrash() {
    #expect(throws: JPEGError.self) { try JPEGDecoder.decodeRGB([0xFF, 0xD8, 0x00, 0x01, 0x02]) }
  }
}
