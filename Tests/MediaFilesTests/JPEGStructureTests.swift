import Imaging
import JPEGCodec
import Capture
import Testing

@testable import MediaFiles

@Suite struct JPEGStructureTests {
  func encoded(_ width: Int = 64, _ height: Int = 48) throws -> [UInt8] {
    try JPEGEncoder.encode(try StillPipeline.planes(of: SyntheticFrames.yuyv(width: width, height: height)), quality: 85)
  }

  @Test func headerGivesTheFrameSize() throws {
    let structure = try JPEGStructure(try encoded(64, 48))
    #expect(structure.width == 64 && structure.height == 48)
    #expect(structure.hasHuffmanTables)
  }

  @Test func aFrameWithoutEOIIsTruncated() throws {
    let jpeg = try encoded()
    #expect(throws: JPEGStructureError.missingEndOfImage) { try JPEGStructure(Array(jpeg.dropLast(200))) }
    #expect(throws: JPEGStructureError.missingStartOfImage) { try JPEGStructure(Array(jpeg.dropFirst(2))) }
    #expect(throws: JPEGStructureError.missingStartOfImage) { try JPEGStructure([]) }
  }

  @Test func zeroPaddingAfterEOIIsNotPartOfTheImage() throws {
    let jpeg = try encoded()
    let structure = try JPEGStructure(jpeg + [0, 0, 0, 0])
    #expect(structure.end == jpeg.count)
  }

  @Test func aLengthRunningPastTheEndIsMalformed() throws {
    var jpeg = try encoded()
    // The first segment after SOI claims to be longer than the file.
    jpeg[4] = 0xFF
    jpeg[5] = 0xF0
    #expect(throws: JPEGStructureError.self) { try JPEGStructure(jpeg) }
  }

  @Test func exifComesFirstJFIFGoesAndTheScanIsKeptByteForByte() throws {
    let jpeg = try encoded()
    #expect(jpeg[2] == 0xFF && jpeg[3] == 0xE0, "TurboJPEG writes JFIF APP0 first")
    let structure = try JPEGStructure(jpeg)
    let app1: [UInt8] = [0xFF, 0xE1, 0x00, 0x08] + Array("Exif".utf8) + [0, 0]
    let out = structure.replacingMetadata(of: jpeg, with: app1)
    #expect(Array(out[0..<2]) == [0xFF, 0xD8])
    #expect(Array(out[2..<12]) == app1)
    let rewritten = try JPEGStructure(out)
    #expect(!rewritten.segments.contains { $0.marker == 0xE0 }, "no JFIF beside Exif (DCF)")
    #expect(Array(out[rewritten.scanStart...]) == Array(jpeg[structure.scanStart...]))
    // A second pass replaces the Exif segment instead of stacking another.
    let twice = rewritten.replacingMetadata(of: out, with: app1)
    #expect(twice == out)
  }

  @Test func framesWithoutHuffmanTablesGetTheStandardOnes() throws {
    let jpeg = try encoded()
    let bare = SyntheticFrames.removingSegments(jpeg, markers: [0xC4])
    let structure = try JPEGStructure(bare)
    #expect(!structure.hasHuffmanTables)
    let fixed = structure.replacingMetadata(of: bare, with: [])
    #expect(try JPEGStructure(fixed).hasHuffmanTables)
    #expect(fixed.count == bare.count - 18 + StandardHuffmanTables.segment.count, "JFIF out, DHT in")
  }

  /// TurboJPEG writes the Annex K tables when not optimising: ours must be the same bytes.
  @Test func theStandardTablesAreTheOnesLibjpegWrites() throws {
    let theirs = SyntheticFrames.huffmanTables(try encoded())
    let ours = SyntheticFrames.huffmanTables([0xFF, 0xD8] + StandardHuffmanTables.segment + [0xFF, 0xDA])
    #expect(theirs.keys.sorted() == [0x00, 0x01, 0x10, 0x11])
    #expect(ours == theirs)
  }
}
