import Imaging
import JPEGCodec
import KioskCore
import MediaFiles
import Scaling
import VideoCodec

/// A roll movie's frames as pictures for the review screen, in playing order: Motion-JPEG frame by frame,
/// H.264 through one decoder fed every sample up to the one due (a frame depends on those before it).
public final class MovieFrames {
  public let index: MovieIndex
  private let decoder: H264Decoder?
  /// The last sample given to the H.264 decoder.
  private var decoded = -1
  private let read: (MovieIndex.Sample) throws -> [UInt8]

  /// `read` gives a sample's bytes from the file.
  public init(_ index: MovieIndex, read: @escaping (MovieIndex.Sample) throws -> [UInt8]) throws {
    self.index = index
    self.read = read
    if index.codec == "avc1" {
      guard let configuration = index.decoderConfiguration else { throw CodecError("H.264 movie without an avcC") }
      decoder = try H264Decoder(configuration: configuration)
    } else {
      decoder = nil
    }
  }

  /// Frame `number`, fitted to the screen. H.264 frames before it that were not decoded yet are decoded (not
  /// shown); going back starts again from the first frame.
  public func picture(
    _ number: Int, screenWidth: Int, screenHeight: Int, orientation: PreviewOrientation
  ) throws -> FittedPicture {
    let samples = index.samples
    guard let decoder else {
      let jpeg = try read(samples[number])
      return try FittedPicture.decode(jpeg, screenWidth: screenWidth, screenHeight: screenHeight, orientation: orientation)
    }
    if number <= decoded { throw CodecError("H.264 frames are decoded forwards only: \(number) after \(decoded)") }
    var picture: XRGBImage?
    while decoded < number {
      decoded += 1
      let sample = try read(samples[decoded])
      // Only the frame asked for is turned into XRGB: the ones before it are decoded for their references.
      let wanted = decoded == number
      let pixels = try decoder.decode(sample) { view in wanted ? (view.width, view.height, DecodedPictures.xrgb(view)) : nil }
      if wanted, let pixels = pixels ?? nil {
        picture = XRGBImage(width: pixels.0, height: pixels.1, denominator: 1, pixels: pixels.2)
      }
    }
    guard let picture else { throw CodecError("H.264 frame \(number) gave no picture") }
    return FittedPicture(fitting: picture, screenWidth: screenWidth, screenHeight: screenHeight, orientation: orientation)
  }
}

extension FittedPicture {
  /// A picture decoded at its full size, fitted, aspect kept, to the screen.
  init(fitting picture: XRGBImage, screenWidth: Int, screenHeight: Int, orientation: PreviewOrientation) {
    let (fitWidth, fitHeight) = orientation.turned(picture.width, picture.height)
    let target = PixelRect.aspectFit(sourceWidth: fitWidth, sourceHeight: fitHeight, into: screenWidth, screenHeight)
    self.init(
      picture: picture,
      scaler: PreviewScaler(sourceWidth: picture.width, sourceHeight: picture.height, target: target, orientation: orientation),
      sourceWidth: picture.width, sourceHeight: picture.height)
  }
}
