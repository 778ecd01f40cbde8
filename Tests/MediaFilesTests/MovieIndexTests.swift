import Foundation
import MediaFiles
import TestPeers
import Testing

/// The index review mode plays from: from our own finished movies, and from a movie ffmpeg wrote (32-bit
/// chunk offsets, several frames a chunk), checked against ffprobe's own packet list.
@Suite struct MovieIndexTests {
  static func index(_ bytes: [UInt8]) throws -> MovieIndex {
    try MovieIndex.read(length: UInt64(bytes.count)) { offset, count in
      Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
    }
  }

  @Test func ourFinishedMovieGivesEveryFrameAtItsTime() throws {
    let frames = try MovieFilesTests.frames(60)
    let (writer, file) = MovieFilesTests.record(frames, fragment: 500_000_000)
    let bytes = MovieFilesTests.finished(writer, file)
    let index = try Self.index(bytes)
    #expect(index.width == MovieFilesTests.width && index.height == MovieFilesTests.height)
    #expect(index.codec == "jpeg")
    #expect(index.samples.count == frames.count)
    for (sample, frame) in zip(index.samples, frames) {
      #expect(Array(bytes[Int(sample.offset)..<Int(sample.offset) + sample.size]) == frame.jpeg)
    }
    // The writer puts frames on the 150 Hz grid from the first one: within one tick (6.7 ms) of the camera's time.
    for (sample, frame) in zip(index.samples, frames) {
      #expect(abs(sample.time - (frame.timestamp - frames[0].timestamp)) <= 6_666_667, "\(sample.time)")
    }
    #expect(index.samples.first?.time == 0)
    #expect(zip(index.samples, index.samples.dropFirst()).allSatisfy { $0.time + $0.duration == $1.time })
    #expect(abs(index.duration - 2_400_000_000) <= 20_000_000, "\(index.duration)")
  }

  @Test func aFragmentedFileThatWasNeverFinishedHasNoIndex() throws {
    let (_, file) = MovieFilesTests.record(try MovieFilesTests.frames(10))
    // The fragmented moov announces fragments but lists no samples: no sample table to play from.
    #expect(throws: MovieIndex.Problem.self) { try Self.index(file) }
    #expect(throws: MovieIndex.Problem.noMovieBox) { try Self.index(Array(file[0..<20])) }
  }

  @Test func ffmpegsMovieMatchesFFprobesPackets() throws {
    let ffmpeg = "/usr/bin/ffmpeg"
    try #require(FileManager.default.isExecutableFile(atPath: ffmpeg), "ffmpeg is a test dependency")
    let path = NSTemporaryDirectory() + "kioskcam-index-\(UUID().uuidString).mov"
    defer { try? FileManager.default.removeItem(atPath: path) }
    let made = try peer([
      ffmpeg, "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x96:rate=12:duration=2", "-c:v", "mjpeg",
      "-q:v", "5", path,
    ])
    try #require(made.status == 0, "\(made.stderr)")
    let probe = try peer([
      "/usr/bin/ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pos,size,pts_time",
      "-of", "csv=p=0", path,
    ])
    #expect(probe.stderr.isEmpty, "ffprobe: \(probe.stderr)")
    let packets = probe.stdout.split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let index = try Self.index(bytes)
    #expect(index.width == 160 && index.height == 96)
    #expect(index.samples.count == 24 && packets.count == 24)
    for (sample, packet) in zip(index.samples, packets) where packet.count == 3 {
      // csv order is the order of the fields in the stream: pts_time, size, pos.
      #expect(Double(packet[0]).map { abs($0 - Double(sample.time) / 1e9) < 0.001 } == true, "\(packet) \(sample)")
      #expect(Int(packet[1]) == sample.size)
      #expect(UInt64(packet[2]) == sample.offset)
    }
    #expect(abs(index.duration - 2_000_000_000) <= 1_000_000)
  }
}
