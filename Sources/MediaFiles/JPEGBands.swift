/// Why band JPEGs cannot be joined into one picture.
public enum JPEGBandError: Error, Sendable, Equatable, CustomStringConvertible {
  case structure(JPEGStructureError)
  /// The bands differ in width, tables or components, or a band above the last is not whole MCU rows.
  case mismatched(band: Int, String)
  /// The first band holds more MCUs than a restart interval can count (65535).
  case intervalTooLong(Int)

  public var description: String {
    switch self {
    case .structure(let error): "\(error)"
    case .mismatched(let band, let why): "band \(band): \(why)"
    case .intervalTooLong(let mcus): "a band of \(mcus) MCUs is longer than a restart interval can be (65535)"
    }
  }
}

/// A picture cut into horizontal bands that are coded, or decoded, each on a core of its own.
///
/// Joined: one baseline JPEG whose restart interval is a band's MCUs, the bands' scans one after the other with
/// a restart marker between them. That is legal JPEG (ITU T.81 B.2.4.4: the DC predictions start again at each
/// marker, as they do at the start of each band's own scan), so every decoder reads it; and a picture whose
/// restart intervals fall on MCU rows, ours or a camera's, can be cut back into bands to decode in parallel.
public enum JPEGBands {
  /// A band of a picture as a JPEG of its own, and where its rows sit in the whole.
  public struct Band: Sendable, Equatable {
    public let jpeg: [UInt8]
    public let firstRow: Int
    public let rows: Int
  }

  /// The frame header's facts a cut needs.
  struct Frame {
    let width: Int
    let height: Int
    let components: Int
    let mcuWidth: Int
    let mcuHeight: Int
    var mcusPerRow: Int { (width + mcuWidth - 1) / mcuWidth }
    var mcuRows: Int { (height + mcuHeight - 1) / mcuHeight }

    /// Baseline or extended sequential Huffman frames only (SOF0, SOF1): progressive and arithmetic ones have
    /// more than one scan or no restart markers to cut at.
    init?(_ bytes: [UInt8], _ structure: JPEGStructure) {
      guard let sof = structure.segments.first(where: { $0.marker == 0xC0 || $0.marker == 0xC1 }) else { return nil }
      let at = sof.range.lowerBound
      // Offsets below count from the marker: a header with fill bytes before its markers is not cut.
      guard sof.range.count >= 10, bytes[at + 1] == sof.marker else { return nil }
      components = Int(bytes[at + 9])
      guard components >= 1, sof.range.count >= 10 + 3 * components else { return nil }
      var (h, v) = (1, 1)
      for component in 0..<components {
        let factors = bytes[at + 11 + 3 * component]
        h = max(h, Int(factors >> 4))
        v = max(v, Int(factors & 0x0F))
      }
      (width, height) = (structure.width, structure.height)
      // A scan of one component is not interleaved: its MCU is one block, whatever its sampling factors say.
      (mcuWidth, mcuHeight) = components == 1 ? (8, 8) : (8 * h, 8 * v)
    }
  }

  /// SOI and every segment before the scan but the restart interval (and, for a band only decoded, application
  /// data and comments: its decoder needs none of them), and where the frame header's height is in it.
  static func header(
    _ bytes: [UInt8], _ structure: JPEGStructure, applicationData: Bool
  ) -> (bytes: [UInt8], heightAt: Int) {
    var out: [UInt8] = [0xFF, 0xD8]
    var heightAt = 0
    for segment in structure.segments where segment.marker != 0xDD {
      if !applicationData, segment.marker == 0xFE || segment.marker & 0xF0 == 0xE0 { continue }
      if segment.marker == 0xC0 || segment.marker == 0xC1 { heightAt = out.count + 5 }
      out += bytes[segment.range]
    }
    return (out, heightAt)
  }

  /// Where the scan's entropy-coded data starts: just past the SOS segment.
  static func dataStart(_ bytes: [UInt8], _ structure: JPEGStructure) -> Int {
    let at = structure.scanStart
    return at + 2 + (Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]))
  }

  /// Bands stacked top to bottom (each a baseline JPEG of the same width, tables and sampling, all but the last
  /// a whole number of MCU rows) as one JPEG. The bytes of each band's scan are kept as they are.
  public static func join(_ bands: [[UInt8]]) throws(JPEGBandError) -> [UInt8] {
    guard bands.count > 1 else { return bands.first ?? [] }
    var structures: [JPEGStructure] = []
    for band in bands {
      do {
        structures.append(try JPEGStructure(band))
      } catch {
        throw .structure(error)
      }
    }
    guard let first = Frame(bands[0], structures[0]) else { throw .mismatched(band: 0, "not a baseline frame") }
    let shared = headerWithoutFrameHeight(bands[0], structures[0])
    var height = 0
    for (index, band) in bands.enumerated() {
      guard let frame = Frame(band, structures[index]), frame.width == first.width,
        frame.components == first.components, frame.mcuHeight == first.mcuHeight
      else { throw .mismatched(band: index, "another width or sampling") }
      guard headerWithoutFrameHeight(band, structures[index]) == shared else {
        throw .mismatched(band: index, "other tables")
      }
      if index < bands.count - 1, frame.height != first.height || frame.height % first.mcuHeight != 0 {
        throw .mismatched(band: index, "\(frame.height) rows where every band but the last has \(first.height), whole MCU rows")
      }
      height += frame.height
    }
    let interval = first.mcusPerRow * first.height / first.mcuHeight
    guard interval <= 0xFFFF, height <= 0xFFFF else { throw .intervalTooLong(interval) }

    var (out, heightAt) = Self.header(bands[0], structures[0], applicationData: true)
    out.reserveCapacity(bands.reduce(0) { $0 + $1.count } + 6 * bands.count)
    out[heightAt] = UInt8(height >> 8)
    out[heightAt + 1] = UInt8(height & 0xFF)
    out += [0xFF, 0xDD, 0x00, 0x04, UInt8(interval >> 8), UInt8(interval & 0xFF)]
    out += bands[0][structures[0].scanStart..<structures[0].end - 2]
    for index in 1..<bands.count {
      out += [0xFF, 0xD0 + UInt8((index - 1) % 8)]
      out += bands[index][dataStart(bands[index], structures[index])..<structures[index].end - 2]
    }
    out += [0xFF, 0xD9]
    return out
  }

  /// Every segment before the scan that decoding needs, and the scan's header, with the frame's height left out:
  /// what bands of one picture share.
  static func headerWithoutFrameHeight(_ bytes: [UInt8], _ structure: JPEGStructure) -> [UInt8] {
    var (out, heightAt) = header(bytes, structure, applicationData: false)
    out[heightAt...heightAt + 1] = [0, 0]
    return out + bytes[structure.scanStart..<dataStart(bytes, structure)]
  }

  /// `jpeg` cut into at most `count` bands of whole restart intervals, each a JPEG that decodes on its own;
  /// nil when it cannot be cut: one band would do, it is not a baseline picture with one interleaved scan, its
  /// restart intervals do not start on MCU rows, or its markers are not where its header says.
  public static func split(_ jpeg: [UInt8], into count: Int) -> [Band]? {
    guard count > 1, let structure = try? JPEGStructure(jpeg), let frame = Frame(jpeg, structure),
      let dri = structure.segments.first(where: { $0.marker == 0xDD }), dri.range.count == 6,
      jpeg[dri.range.lowerBound + 1] == 0xDD, jpeg[structure.scanStart + 1] == 0xDA
    else { return nil }
    let interval = Int(jpeg[dri.range.lowerBound + 4]) << 8 | Int(jpeg[dri.range.lowerBound + 5])
    let scanComponents = Int(jpeg[structure.scanStart + 4])
    guard interval > 0, interval % frame.mcusPerRow == 0, scanComponents == frame.components else { return nil }
    let rowsPerInterval = interval / frame.mcusPerRow
    let intervals = (frame.mcuRows + rowsPerInterval - 1) / rowsPerInterval
    guard intervals > 1 else { return nil }
    let start = dataStart(jpeg, structure)
    guard let markers = restartMarkers(jpeg, from: start, end: structure.end - 2), markers.count == intervals - 1 else {
      return nil
    }
    let perBand = (intervals + count - 1) / count
    let (header, heightAt) = Self.header(jpeg, structure, applicationData: false)
    let scanHeader = jpeg[structure.scanStart..<start]
    // A band of more than one interval keeps the restart interval, its markers numbered from RST0 again.
    let restart: [UInt8] = perBand > 1 ? Array(jpeg[dri.range]) : []
    var bands: [Band] = []
    var first = 0
    while first < intervals {
      let last = min(intervals, first + perBand)
      let firstRow = first * rowsPerInterval * frame.mcuHeight
      let rows = min(frame.height, last * rowsPerInterval * frame.mcuHeight) - firstRow
      var band = header
      band[heightAt] = UInt8(rows >> 8)
      band[heightAt + 1] = UInt8(rows & 0xFF)
      band += restart
      band += scanHeader
      for index in first..<last {
        if index > first { band += [0xFF, 0xD0 + UInt8((index - first - 1) % 8)] }
        let from = index == 0 ? start : markers[index - 1] + 2
        let to = index == intervals - 1 ? structure.end - 2 : markers[index]
        band += jpeg[from..<to]
      }
      band += [0xFF, 0xD9]
      bands.append(Band(jpeg: band, firstRow: firstRow, rows: rows))
      first = last
    }
    return bands
  }

  /// Where each restart marker of the entropy-coded data in `from..<end` is, in order; nil when a marker other
  /// than RSTn (or the numbering) says the data is not one scan cut by restarts.
  static func restartMarkers(_ bytes: [UInt8], from: Int, end: Int) -> [Int]? {
    var markers: [Int] = []
    let failed: Bool = bytes.withUnsafeBufferPointer { buffer in
      var at = from
      while true {
        guard let found = nextFF(buffer, from: at, end: end) else { return false }
        guard found + 1 < end else { return true }
        let next = buffer[found + 1]
        switch next {
        case 0x00, 0xFF:
          at = found + 1 + (next == 0 ? 1 : 0)
        case 0xD0...0xD7 where Int(next - 0xD0) == markers.count % 8:
          markers.append(found)
          at = found + 2
        default:
          return true
        }
      }
    }
    return failed ? nil : markers
  }

  /// The first 0xFF at or after `from`, eight bytes a step (entropy-coded data has few).
  static func nextFF(_ buffer: UnsafeBufferPointer<UInt8>, from: Int, end: Int) -> Int? {
    var at = from
    let raw = UnsafeRawBufferPointer(buffer)
    while at + 8 <= end {
      // A word holds an 0xFF byte when its complement holds a zero byte.
      let word = ~raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)
      if (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0 { break }
      at += 8
    }
    while at < end {
      if buffer[at] == 0xFF { return at }
      at += 1
    }
    return nil
  }
}
