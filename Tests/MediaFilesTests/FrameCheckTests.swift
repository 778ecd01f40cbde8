import KioskCore
import Testing

@testable import Camera
@testable import Capture

/// Which frames the loop refuses to keep: flagged, short for their geometry, or MJPEG cut off at either end.
@Suite struct FrameCheckTests {
  func format(_ pixels: PixelFormat, _ width: Int = 8, _ height: Int = 4) -> StreamFormat {
    let stride = pixels == .yuyv ? width * 2 : width
    return StreamFormat(format: pixels, width: width, height: height, bytesPerLine: pixels == .mjpeg ? 0 : stride,
      imageSize: 0, range: .limited)
  }

  func problem(_ bytes: [UInt8], _ format: StreamFormat, flagged: Bool = false) -> FrameProblem? {
    bytes.withUnsafeBytes {
      FrameCheck.problem(
        with: $0, flagged: flagged, format: format.format, bytesPerLine: format.bytesPerLine, height: format.height)
    }
  }

  @Test func yuyvAndNV12NeedTheirWholeGeometry() {
    #expect(problem([UInt8](repeating: 0, count: 64), format(.yuyv)) == nil)
    #expect(problem([UInt8](repeating: 0, count: 63), format(.yuyv)) == .short)
    #expect(problem([UInt8](repeating: 0, count: 48), format(.nv12)) == nil)
    #expect(problem([UInt8](repeating: 0, count: 40), format(.nv12)) == .short)
  }

  @Test func theDriversErrorFlagWins() {
    #expect(problem([UInt8](repeating: 0, count: 64), format(.yuyv), flagged: true) == .flaggedError)
  }

  @Test func mjpegNeedsSOIAndEOIPaddingAllowed() throws {
    let jpeg = try SyntheticFrames.mjpeg(width: 64, height: 48, padding: 0).bytes
    #expect(problem(jpeg, format(.mjpeg)) == nil)
    #expect(problem(jpeg + [0, 0, 0], format(.mjpeg)) == nil)
    #expect(problem(Array(jpeg.dropLast(10)), format(.mjpeg)) == .truncated)
    #expect(problem(Array(jpeg.dropFirst(2)), format(.mjpeg)) == .truncated)
    #expect(problem([], format(.mjpeg)) == .truncated)
  }
}
