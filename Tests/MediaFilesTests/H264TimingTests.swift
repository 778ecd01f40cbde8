import Imaging
import Testing

@testable import VideoCodec

/// x264 is given each picture's capture time: a recording that takes fewer of the camera's frames (the movie's
/// pace under a quota, a slow board) spends its bit rate over the seconds recorded, not over a count of
/// pictures that assumes the camera's rate.
@Suite struct H264TimingTests {
  /// Bytes a second of capture time for 60 pictures of a moving scene, `interval` apart.
  static func bytesPerSecond(interval: Int64) throws -> Double {
    let settings = H264Settings(width: 320, height: 180, frameRate: 30, bitRate: 400_000, threads: 1)
    let encoder = try H264Encoder(settings)
    var bytes = 0
    for number in 0..<60 {
      let picture = try H264Picture(width: settings.width, height: settings.height)
      H264PresetChoice.scene(picture.target, number)
      bytes += try encoder.encode(picture, timestamp: 5_000_000_000 + Int64(number) * interval).reduce(0) { $0 + $1.bytes.count }
    }
    bytes += try encoder.finish().reduce(0) { $0 + $1.bytes.count }
    return Double(bytes) / (Double(60 * interval) / 1e9)
  }

  @Test func aMovieAtAFifthOfTheCamerasRateKeepsItsBitRate() throws {
    let full = try Self.bytesPerSecond(interval: 33_333_333)
    let paced = try Self.bytesPerSecond(interval: 200_000_000)
    // Counted by pictures, the paced movie would get a sixth of the bytes a second (each picture the same).
    #expect(paced >= 0.5 * full, "\(Int(paced)) bytes a second at 5 pictures a second, \(Int(full)) at 30")
    #expect(full <= 400_000 / 8 * 2, "\(Int(full)) bytes a second for 400 kbit/s")
  }
}
