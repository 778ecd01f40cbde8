// A movie a crash cut short, read back into a writer as of its last complete fragment.
extension MovieWriter {
  /// What a crash left: the writer as of the last complete fragment, and the length to cut the file to.
  ///
  /// `read(offset, count)` returns up to `count` bytes of the file at `offset`. Nil when the file does not
  /// even hold its header (nothing recorded: there is nothing to keep).
  public static func recover(length: UInt64, read: (UInt64, Int) -> [UInt8]) -> MovieWriter? {
    func header(at offset: UInt64) -> (size: UInt64, type: String)? {
      guard offset + 8 <= length else { return nil }
      var reader = BoxReader(read(offset, 8))
      guard let size = reader.u32(), let type = reader.fourCC(), size >= 8, offset + UInt64(size) <= length else {
        return nil
      }
      return (UInt64(size), type)
    }
    guard let ftyp = header(at: 0), ftyp.type == "ftyp", let movie = header(at: ftyp.size),
      movie.type == "moov" || movie.type == "free", movie.size < 1 << 24
    else { return nil }
    let movieBytes = read(ftyp.size, Int(movie.size))
    let brand = String(decoding: read(8, 4), as: UTF8.self)
    guard let size = dimensions(movieBytes),
      let format = sampleEntry(movieBytes).flatMap({ VideoTrackFormat.read(entry: $0, container: brand == "qt  " ? .quickTime : .mp4) })
    else { return nil }
    var writer = MovieWriter(
      width: size.width, height: size.height, format: format, created: creationTime(movieBytes) ?? 0,
      audio: soundEntry(movieBytes))
    writer.headerOffset = ftyp.size
    var offset = ftyp.size + movie.size
    writer.length = offset
    // A fragment is a moof (or a moof already retyped free by an interrupted finish) and its whole mdat.
    while let box = header(at: offset), box.type == "moof" || box.type == "free", box.size < 1 << 24,
      let data = header(at: offset + box.size), data.type == "mdat",
      let fragment = parseFragment(read(offset, Int(box.size)), at: offset, mdat: (offset + box.size, data.size))
    {
      if writer.fragments.isEmpty { writer.recordingStart = recordingStart(inMoof: read(offset, Int(box.size))) }
      writer.fragments.append(fragment)
      offset += box.size + data.size
      writer.length = offset
    }
    writer.decodeTime = writer.ticksWritten
    return writer
  }

  /// The creation time in the movie header of a moov (or of a moov retyped free).
  static func creationTime(_ movie: [UInt8]) -> UInt32? {
    for mvhd in BoxReader.children(of: movie, in: 8..<movie.count) where mvhd.type == "mvhd" {
      var reader = BoxReader(movie, at: mvhd.content.lowerBound + 4)  // after version and flags
      return reader.u32()
    }
    return nil
  }

  /// The first sample entry of the first track's sample description, whole: the codec the file was started with.
  static func sampleEntry(_ movie: [UInt8]) -> [UInt8]? {
    func child(_ type: String, _ range: Range<Int>) -> Range<Int>? {
      BoxReader.children(of: movie, in: range).first { $0.type == type }?.content
    }
    guard let trak = child("trak", 8..<movie.count), let mdia = child("mdia", trak), let minf = child("minf", mdia),
      let stbl = child("stbl", minf), let stsd = child("stsd", stbl), stsd.count > 8
    else { return nil }
    // After the full box's version and flags and the entry count: the entry, size and type included.
    var reader = BoxReader(movie, at: stsd.lowerBound + 8)
    guard let size = reader.u32(), size >= 8, stsd.lowerBound + 8 + Int(size) <= stsd.upperBound else { return nil }
    return Array(movie[stsd.lowerBound + 8..<stsd.lowerBound + 8 + Int(size)])
  }

  /// Width and height from the track header of a moov (or of a moov retyped free).
  static func dimensions(_ movie: [UInt8]) -> (width: Int, height: Int)? {
    for trak in BoxReader.children(of: movie, in: 8..<movie.count) where trak.type == "trak" {
      for tkhd in BoxReader.children(of: movie, in: trak.content) where tkhd.type == "tkhd" {
        // Version 0: flags, two times, track ID, reserved, duration, 8 reserved, 4 shorts, matrix.
        var reader = BoxReader(movie, at: tkhd.content.lowerBound + 4 + 20 + 8 + 8 + 36)
        guard let width = reader.u32(), let height = reader.u32() else { return nil }
        return (Int(width >> 16), Int(height >> 16))
      }
    }
    return nil
  }

  /// The sound track's sample entry and rate, from the trak whose handler is `soun`; nil for a silent movie.
  static func soundEntry(_ movie: [UInt8]) -> AudioTrackFormat? {
    func child(_ type: String, _ range: Range<Int>) -> Range<Int>? {
      BoxReader.children(of: movie, in: range).first { $0.type == type }?.content
    }
    for trak in BoxReader.children(of: movie, in: 8..<movie.count) where trak.type == "trak" {
      guard let mdia = child("mdia", trak.content), let hdlr = child("hdlr", mdia), hdlr.count >= 12,
        String(decoding: movie[hdlr.lowerBound + 8..<hdlr.lowerBound + 12], as: UTF8.self) == "soun",
        let mdhd = child("mdhd", mdia), let minf = child("minf", mdia), let stbl = child("stbl", minf),
        let stsd = child("stsd", stbl), stsd.count > 8
      else { continue }
      var header = BoxReader(movie, at: mdhd.lowerBound + 12)  // version 0: flags, two times, then the timescale
      var reader = BoxReader(movie, at: stsd.lowerBound + 8)
      guard let timescale = header.u32(), timescale > 0, let size = reader.u32(), size >= 8,
        stsd.lowerBound + 8 + Int(size) <= stsd.upperBound
      else { return nil }
      return AudioTrackFormat.read(
        entry: Array(movie[stsd.lowerBound + 8..<stsd.lowerBound + 8 + Int(size)]), timescale: timescale)
    }
    return nil
  }

  /// One of our fragments: the pictures' traf (track 1) and, where there is sound, the sound's (track 2),
  /// whose samples follow the pictures' in the one mdat and fill it exactly.
  static func parseFragment(_ moof: [UInt8], at offset: UInt64, mdat: (offset: UInt64, size: UInt64)) -> Fragment? {
    var video: Fragment?
    var sound: (offset: UInt64, sizes: [UInt32])?
    for traf in BoxReader.children(of: moof, in: 8..<moof.count) where traf.type == "traf" {
      guard let tfhd = BoxReader.children(of: moof, in: traf.content).first(where: { $0.type == "tfhd" }) else { return nil }
      var trackReader = BoxReader(moof, at: tfhd.content.lowerBound + 4)
      guard let track = trackReader.u32() else { return nil }
      for trun in BoxReader.children(of: moof, in: traf.content) where trun.type == "trun" {
        var reader = BoxReader(moof, at: trun.content.lowerBound)
        // Ours: durations and sizes, and flags per sample unless every sample is a sync sample.
        guard let flags = reader.u32().map({ $0 & 0xFF_FFFF }), flags == 0x000301 || flags == 0x000701,
          let count = reader.u32(), let dataOffset = reader.u32()
        else { return nil }
        var sizes: [UInt32] = []
        var durations: [UInt32] = []
        var syncs: [Bool] = []
        for _ in 0..<count {
          guard let duration = reader.u32(), let size = reader.u32() else { return nil }
          durations.append(duration)
          sizes.append(size)
          if flags == 0x000701 {
            guard let sampleFlags = reader.u32() else { return nil }
            syncs.append(sampleFlags & 0x0001_0000 == 0)
          } else {
            syncs.append(true)
          }
        }
        let first = offset + UInt64(dataOffset)
        if track == audioTrackID {
          sound = (first, sizes)
        } else if track == 1 {
          video = Fragment(moofOffset: offset, firstSampleOffset: first, sizes: sizes, durations: durations, syncs: syncs)
        } else {
          return nil
        }
      }
    }
    guard var video else { return nil }
    let pictures = video.sizes.reduce(UInt64(0)) { $0 + UInt64($1) }
    let soundBytes = sound?.sizes.reduce(UInt64(0)) { $0 + UInt64($1) } ?? 0
    // The samples must be exactly the mdat's payload, pictures first, or this is not one of our fragments.
    guard video.firstSampleOffset == mdat.offset + 8, pictures + soundBytes == mdat.size - 8 else { return nil }
    if let sound {
      guard sound.offset == video.firstSampleOffset + pictures else { return nil }
      video.audioOffset = sound.offset
      video.audioSizes = sound.sizes
    }
    return video
  }
}
