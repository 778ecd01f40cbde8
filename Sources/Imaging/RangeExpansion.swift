/// Limited-range YCbCr (Y 16-235, Cb/Cr 16-240) stretched to JPEG's full range in place, and back (for
/// H.264, which is recorded limited), two samples per lookup: a 64 Ki-entry table of sample pairs (128 KiB, resident in a core's L2) halves the lookups of the
/// byte table, and was 2x faster on this machine; arithmetic with the exact rounding did not vectorise here.
public enum RangeExpansion {
  static let lumaPairs = pairs(YCbCrRange.expandLuma)
  static let chromaPairs = pairs(YCbCrRange.expandChroma)
  static let compressedLumaPairs = pairs(YCbCrRange.compressLuma)
  static let compressedChromaPairs = pairs(YCbCrRange.compressChroma)

  private static func pairs(_ table: [UInt8]) -> [UInt16] {
    // Each byte of a pair maps through the table on its own, so the table is the same in either byte order.
    (0..<65536).map { UInt16(table[$0 & 0xFF]) | UInt16(table[$0 >> 8]) << 8 }
  }

  public static func expandLuma(_ plane: UnsafeMutableBufferPointer<UInt8>) { expand(plane, lumaPairs, YCbCrRange.expandLuma) }
  public static func expandChroma(_ plane: UnsafeMutableBufferPointer<UInt8>) {
    expand(plane, chromaPairs, YCbCrRange.expandChroma)
  }

  public static func compressLuma(_ plane: UnsafeMutableBufferPointer<UInt8>) {
    expand(plane, compressedLumaPairs, YCbCrRange.compressLuma)
  }
  public static func compressChroma(_ plane: UnsafeMutableBufferPointer<UInt8>) {
    expand(plane, compressedChromaPairs, YCbCrRange.compressChroma)
  }

  private static func expand(_ plane: UnsafeMutableBufferPointer<UInt8>, _ pairs: [UInt16], _ single: [UInt8]) {
    guard let base = plane.baseAddress else { return }
    let count = plane.count
    pairs.withUnsafeBufferPointer { table in
      let words = UnsafeMutableRawPointer(base)
      for index in 0..<count / 2 {
        let pair = words.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self)
        words.storeBytes(of: table[Int(pair)], toByteOffset: index * 2, as: UInt16.self)
      }
    }
    if count % 2 == 1 { base[count - 1] = single[Int(base[count - 1])] }
  }
}
