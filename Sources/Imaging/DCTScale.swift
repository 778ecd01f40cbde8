/// JPEG decoders can scale by 1/2, 1/4 and 1/8 inside the inverse DCT almost for free; the rest of the way
/// is a nearest-neighbour scale of far fewer pixels.
public enum DCTScale {
  /// The largest denominator (1, 2, 4 or 8) at which a `width` x `height` JPEG still decodes to at least
  /// `targetWidth` x `targetHeight`, so that the remaining scale only ever shrinks (never blurs by enlarging).
  public static func denominator(width: Int, height: Int, targetWidth: Int, targetHeight: Int) -> Int {
    var best = 1
    for denominator in [2, 4, 8] {
      // TurboJPEG rounds scaled sizes up.
      let scaledWidth = (width + denominator - 1) / denominator
      let scaledHeight = (height + denominator - 1) / denominator
      if scaledWidth >= targetWidth, scaledHeight >= targetHeight { best = denominator }
    }
    return best
  }
}
