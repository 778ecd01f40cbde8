import LinuxIO
import Testing

/// Four-character codes as V4L2 and DRM pack them, and as v4l2-ctl and modetest print them.
@Suite struct FourCCTests {
  @Test func codesReadLowestByteFirst() {
    #expect(FourCC(code: 0x3231_564E).description == "NV12")
    #expect(FourCC(code: 0x3432_5258).description == "XR24")
    #expect(FourCC("YU12")?.code == 0x3231_5559)
    #expect(FourCC("YU1") == nil)
  }

  @Test func trailingSpacesGoAndTheBigEndianBitIsNamed() {
    // V4L2_PIX_FMT_Y10 is 'Y' '1' '0' ' '; V4L2_PIX_FMT_ARGB555X is v4l2_fourcc_be('A', 'R', '1', '5').
    #expect(FourCC(code: 0x2030_3159).description == "Y10")
    #expect(FourCC(code: 0x3531_5241 | 1 << 31).description == "AR15-BE")
  }
}
