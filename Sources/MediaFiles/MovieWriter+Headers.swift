// The headers of a movie: the file type, and the index (moov) with its sample table, fragmented while
// recording or whole once finished.
extension MovieWriter {
  // MARK: Headers

  static func fileType(_ out: inout BoxBuilder, _ container: VideoTrackFormat.Container) {
    out.box("ftyp") { ftyp in
      switch container {
      case .quickTime:
        // QuickTime's own brand: a .MOV that QuickTime, ffmpeg and the ISO readers all take.
        ftyp.fourCC("qt  ")
        ftyp.u32(0x2005_0300)
        ftyp.fourCC("qt  ")
      case .mp4:
        // What browsers and phones take an H.264 MP4 by; iso6 names the fragments it has while recording.
        ftyp.fourCC("isom")
        ftyp.u32(0x200)
        for brand in ["isom", "iso2", "iso6", "avc1", "mp41"] { ftyp.fourCC(brand) }
      }
    }
  }

  func movie(_ out: inout BoxBuilder, fragmented: Bool) {
    let all = fragmented ? [] : fragments
    let mediaTicks = all.reduce(UInt64(0)) { $0 + $1.durations.reduce(0) { $0 + UInt64($1) } }
    let movieTicks = UInt32(clamping: mediaTicks * UInt64(Self.movieTimescale) / UInt64(Self.timescale))
    // The movie lasts as long as its longer track (the sound ends within an AAC frame of the pictures).
    let soundTicks = fragmented ? 0 : UInt32(clamping: audioNanosecondsWritten / 1_000_000)
    out.box("moov") { moov in
      moov.fullBox("mvhd") { mvhd in
        mvhd.u32(created)  // creation and modification time
        mvhd.u32(created)
        mvhd.u32(Self.movieTimescale)
        mvhd.u32(max(movieTicks, soundTicks))
        mvhd.u32(0x0001_0000)  // rate 1.0
        mvhd.u16(0x0100)  // volume 1.0
        mvhd.zeros(10)
        mvhd.unityMatrix()
        mvhd.zeros(24)  // preview, poster, selection and current times
        mvhd.u32(audio == nil ? 2 : 3)  // next track ID
      }
      moov.box("trak") { trak in
        trak.fullBox("tkhd", flags: 0x3) { tkhd in  // enabled, in movie
          tkhd.u32(created)
          tkhd.u32(created)
          tkhd.u32(1)  // track ID
          tkhd.u32(0)
          tkhd.u32(movieTicks)
          tkhd.zeros(8)
          tkhd.u16(0)  // layer
          tkhd.u16(0)  // alternate group
          tkhd.u16(0)  // volume: a video track has none
          tkhd.u16(0)
          tkhd.unityMatrix()
          tkhd.u32(UInt32(width) << 16)
          tkhd.u32(UInt32(height) << 16)
        }
        trak.box("mdia") { mdia in
          mdia.fullBox("mdhd") { mdhd in
            mdhd.u32(created)
            mdhd.u32(created)
            mdhd.u32(Self.timescale)
            mdhd.u32(UInt32(clamping: mediaTicks))
            mdhd.u16(0x55C4)  // language "und"
            mdhd.u16(0)
          }
          mdia.fullBox("hdlr") { hdlr in
            // QuickTime names the component type here; ISO files have zero.
            if format.container == .quickTime { hdlr.fourCC("mhlr") } else { hdlr.u32(0) }
            hdlr.fourCC("vide")
            hdlr.zeros(12)
            hdlr.bytes += Array("VideoHandler".utf8) + [0]
          }
          mdia.box("minf") { minf in
            minf.fullBox("vmhd", flags: 1) { $0.zeros(8) }
            minf.box("dinf") { dinf in
              dinf.fullBox("dref") { dref in
                dref.u32(1)
                dref.fullBox("url ", flags: 1) { _ in }  // the media is in this file
              }
            }
            minf.box("stbl") { stbl in sampleTable(&stbl, all) }
          }
        }
      }
      if let audio { audioTrack(&moov, audio, fragmented: fragmented) }
      if fragmented {
        moov.box("mvex") { mvex in
          for track in audio == nil ? [UInt32(1)] : [1, Self.audioTrackID] {
            mvex.fullBox("trex") { trex in
              trex.u32(track)
              trex.u32(1)  // sample description
              trex.u32(0)
              trex.u32(0)
              trex.u32(0)  // flags: every trun says its own where samples differ
            }
          }
        }
      }
    }
  }

  /// `stsc` for one chunk per fragment: a new entry only where the number of samples a chunk changes.
  static func sampleToChunk(_ stbl: inout BoxBuilder, samplesPerChunk: [Int]) {
    var chunkRuns: [(firstChunk: UInt32, samples: UInt32)] = []
    for (index, samples) in samplesPerChunk.enumerated() where chunkRuns.last?.samples != UInt32(samples) {
      chunkRuns.append((UInt32(index + 1), UInt32(samples)))
    }
    stbl.fullBox("stsc") { stsc in
      stsc.u32(UInt32(chunkRuns.count))
      for run in chunkRuns {
        stsc.u32(run.firstChunk)
        stsc.u32(run.samples)
        stsc.u32(1)
      }
    }
  }

  private func sampleTable(_ stbl: inout BoxBuilder, _ fragments: [Fragment]) {
    stbl.fullBox("stsd") { stsd in
      stsd.u32(1)
      stsd.bytes += format.sampleEntry
    }
    // Durations, run-length coded.
    var runs: [(count: UInt32, duration: UInt32)] = []
    for duration in fragments.flatMap(\.durations) {
      if let last = runs.last, last.duration == duration {
        runs[runs.count - 1].count += 1
      } else {
        runs.append((1, duration))
      }
    }
    stbl.fullBox("stts") { stts in
      stts.u32(UInt32(runs.count))
      for run in runs {
        stts.u32(run.count)
        stts.u32(run.duration)
      }
    }
    Self.sampleToChunk(&stbl, samplesPerChunk: fragments.map(\.sizes.count))
    if !format.allSync {
      // Sync samples by number, from 1: where a player may start decoding, and seek to.
      let syncs = fragments.flatMap(\.syncs).enumerated().filter(\.element).map { UInt32($0.offset + 1) }
      stbl.fullBox("stss") { stss in
        stss.u32(UInt32(syncs.count))
        for number in syncs { stss.u32(number) }
      }
    }
    let sizes = fragments.flatMap(\.sizes)
    stbl.fullBox("stsz") { stsz in
      stsz.u32(0)
      stsz.u32(UInt32(sizes.count))
      for size in sizes { stsz.u32(size) }
    }
    // 64-bit chunk offsets: a long recording passes 4 GiB.
    stbl.fullBox("co64") { co64 in
      co64.u32(UInt32(fragments.count))
      for fragment in fragments { co64.u64(fragment.firstSampleOffset) }
    }
  }
}
