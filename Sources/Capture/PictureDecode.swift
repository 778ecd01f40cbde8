import JPEGCodec
import MediaFiles

/// A photo decoded for the screen on more than one core when it can be: a file cut by restart markers on MCU
/// rows (every still we save, and many cameras' files) is decoded band by band at once; any other whole.
public enum PictureDecode {
  /// `jpeg` as XRGB8888 at the DCT scale that still covers `targetWidth` x `targetHeight`, on `threads` cores.
  public static func xrgb(
    _ jpeg: [UInt8], covering targetWidth: Int, _ targetHeight: Int, threads: Int
  ) throws(JPEGError) -> XRGBImage {
    if threads > 1, let bands = JPEGBands.split(jpeg, into: threads), let header = try? JPEGDecoder.header(jpeg),
      // A band the decoder refuses leaves the whole file to say why, decoded as any other.
      let picture = try? BandedJPEGDecoder.decodeXRGB(
        bands.map { BandedJPEGDecoder.Band(jpeg: $0.jpeg, firstRow: $0.firstRow) }, width: header.width,
        height: header.height, covering: targetWidth, targetHeight)
    {
      return picture
    }
    let whole = jpeg.withUnsafeBytes { bytes in
      Result { () throws(JPEGError) in try JPEGDecoder.decodeXRGB(bytes, covering: targetWidth, targetHeight) }
    }
    return try whole.get()
  }
}
