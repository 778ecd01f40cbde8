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

@Suite struct NV12AndThumbnailTests {
  @Test func nv12SplitsIntoHalfSizeChromaPlanes() {
    // 4x2 luma with a 2-byte row padding, then one CbCr row for the two luma rows.
    let frame: [UInt8] = [1, 2, 3, 4, 0, 0, 5, 6, 7, 8, 0, 0, 20, 30, 21, 31, 0, 0]
    let planes = frame.withUnsafeBytes { PlanarYCbCr(nv12: $0, width: 4, height: 2, stride: 6, range: .full) }
    #expect(planes.luma == [1, 2, 3, 4, 5, 6, 7, 8])
    #expect(planes.cb == [20, 21])
    #expect(planes.cr == [30, 31])
    #expect(planes.chromaWidth == 2 && planes.chromaHeight == 1)
  }

  @Test func nv12LimitedRangeIsExpanded() {
    let frame: [UInt8] = [16, 235, 16, 235, 240, 16]
    let planes = frame.withUnsafeBytes { PlanarYCbCr(nv12: $0, width: 2, height: 2, stride: 2, range: .limited) }
    #expect(planes.luma == [0, 255, 0, 255])
    #expect(planes.cb == [255] && planes.cr == [0])
  }

  @Test func aWideFrameIsLetterboxedIntoTheThumbnailAndAveraged() {
    // 320x180 (16:9): left half luma 200, right half 100; the 160x120 thumbnail is 160x90 with 15-row bars.
    let width = 320, height = 180
    let luma = (0..<(width * height)).map { UInt8($0 % width < width / 2 ? 200 : 100) }
    let chroma = [UInt8](repeating: 90, count: (width / 2) * height)
    let planes = PlanarYCbCr(
      width: width, height: height, chromaWidth: width / 2, chromaHeight: height, luma: luma, cb: chroma, cr: chroma)
    let thumbnail = planes.thumbnail(width: 160, height: 120)
    #expect(thumbnail.chromaWidth == 80 && thumbnail.chromaHeight == 60)
    #expect(thumbnail.luma[0] == 0 && thumbnail.luma[14 * 160 + 50] == 0, "black bar above")
    #expect(thumbnail.luma[105 * 160 + 50] == 0, "black bar below")
    #expect(thumbnail.luma[15 * 160 + 10] == 200 && thumbnail.luma[104 * 160 + 150] == 100)
    #expect(thumbnail.cb[2 * 80 + 10] == 128, "neutral chroma in the bar")
    #expect(thumbnail.cb[30 * 80 + 10] == 90)
  }

  @Test func fourTwoZeroPlanesEncodeAndDecode() throws {
    let planes = PlanarYCbCr(
      width: 32, height: 18, chromaWidth: 16, chromaHeight: 9, luma: [UInt8](repeating: 235, count: 32 * 18),
      cb: [UInt8](repeating: 128, count: 16 * 9), cr: [UInt8](repeating: 128, count: 16 * 9))
    let jpeg = try JPEGEncoder.encode(planes, quality: 90)
    let header = try JPEGDecoder.header(jpeg)
    #expect(header.width == 32 && header.height == 18)
    #expect(try JPEGDecoder.decodePlanes(jpeg).chromaHeight == 9, "4:2:0 kept")
  }
}

/// The movie presets' 2x2 downscale, sample by sample, on even and odd sizes.
struct HalvingTests {
  @Test func everySampleIsTheAverageOfItsTwoByTwo() {
    // 4x2 luma 0..7, 4:2:2 chroma 2x2.
    let planes = PlanarYCbCr(
      width: 4, height: 2, chromaWidth: 2, chromaHeight: 2, luma: [0, 1, 2, 3, 4, 5, 6, 7], cb: [10, 20, 30, 40],
      cr: [100, 100, 200, 200])
    let half = planes.halved()
    #expect((half.width, half.height, half.chromaWidth, half.chromaHeight) == (2, 1, 1, 1))
    // (0+1+4+5)/4 = 2.5 rounds to 3; (2+3+6+7)/4 = 4.5 rounds to 5.
    #expect(half.luma == [3, 5])
    #expect(half.cb == [25])
    #expect(half.cr == [150])
  }

  @Test func anOddEdgeCountsItsLastRowAndColumnTwice() {
    let planes = PlanarYCbCr(
      width: 3, height: 3, chromaWidth: 2, chromaHeight: 2, luma: [0, 0, 90, 0, 0, 90, 30, 30, 60],
      cb: [128, 128, 128, 128], cr: [128, 128, 128, 128])
    let half = planes.halved()
    #expect((half.width, half.height, half.chromaWidth, half.chromaHeight) == (2, 2, 1, 1))
    #expect(half.luma == [0, 90, 30, 60])
  }

  @Test func a422FrameStays422() {
    let frame = PlanarYCbCr(
      width: 640, height: 360, chromaWidth: 320, chromaHeight: 360, luma: .init(repeating: 50, count: 640 * 360),
      cb: .init(repeating: 60, count: 320 * 360), cr: .init(repeating: 70, count: 320 * 360))
    let half = frame.halved()
    #expect((half.width, half.height, half.chromaWidth, half.chromaHeight) == (320, 180, 160, 180))
    #expect(Set(half.luma) == [50] && Set(half.cb) == [60] && Set(half.cr) == [70])
  }
}
