// The sound track: AAC frames queued between the pictures' fragments and written into the same ones (a traf
// of their own after the pictures' in each moof, their bytes after the pictures' in each mdat), so a power
// cut keeps both up to the same last whole fragment.
//
// Its time is counted in samples, never taken from a clock: each AAC frame lasts `frameLength` ticks of the
// track's timescale (the sample rate), so the track cannot drift from what was captured. Lining it up with
// the pictures is the recorder's job (`AudioTimeline`): sample 0 is the first frame's moment.
extension MovieWriter {
  /// Track ID of the sound.
  static let audioTrackID: UInt32 = 2

  /// One AAC frame; it goes into the fragment the next picture completes.
  public mutating func appendAudio(_ packet: [UInt8]) {
    guard audio != nil else { return }
    audioWaiting.append(packet)
  }

  /// AAC frames in complete fragments.
  public var audioSamplesWritten: Int { fragments.reduce(0) { $0 + $1.audioSizes.count } }

  /// Their duration, nanoseconds.
  public var audioNanosecondsWritten: Int64 {
    guard let audio else { return 0 }
    let ticks = Int64(audioSamplesWritten) * Int64(audio.frameLength)
    return ticks / Int64(audio.sampleRate) * 1_000_000_000 + ticks % Int64(audio.sampleRate) * 1_000_000_000 / Int64(audio.sampleRate)
  }

  /// AAC frames of the track that start before `ticks` of the pictures' time: ceil(end * rate / 1e9 / frameLength).
  func audioFrames(before ticks: UInt64) -> Int {
    guard let audio else { return 0 }
    let samples = (Int64(audio.sampleRate) * Self.nanoseconds(ticks) + 999_999_999) / 1_000_000_000
    return Int((samples + Int64(audio.frameLength) - 1) / Int64(audio.frameLength))
  }

  /// The sound for a fragment whose pictures end at `ticks`: what starts before then (a slow encoder writes
  /// pictures seconds after the sound of their moment was heard; the rest waits for the next fragment, and
  /// at the end is cut), so the sound never runs more than an AAC frame (21 ms at 48 kHz) past the pictures.
  mutating func takeAudio(toVideoTicks ticks: UInt64) -> [[UInt8]] {
    guard audio != nil else { return [] }
    let keep = min(audioWaiting.count, max(0, audioFrames(before: ticks) - audioSamplesWritten))
    defer { audioWaiting.removeFirst(keep) }
    return Array(audioWaiting.prefix(keep))
  }

  /// The sound's traf in a fragment's moof: `dataOffset` from the moof's start, where the pictures end.
  func audioTrackFragment(_ moof: inout BoxBuilder, _ audio: AudioTrackFormat, _ sound: [[UInt8]], dataOffset: UInt32) {
    let decoded = UInt64(audioSamplesWritten) * UInt64(audio.frameLength)
    moof.box("traf") { traf in
      traf.fullBox("tfhd", flags: 0x02_0000) { $0.u32(Self.audioTrackID) }
      traf.fullBox("tfdt", version: 1) { $0.u64(decoded) }
      // data-offset, sample-duration and sample-size present; every AAC frame is a sync sample.
      traf.fullBox("trun", flags: 0x000301) { trun in
        trun.u32(UInt32(sound.count))
        trun.u32(dataOffset)
        for sample in sound {
          trun.u32(UInt32(audio.frameLength))
          trun.u32(UInt32(sample.count))
        }
      }
    }
  }

  /// The sound's trak in the moov: empty while recording (its samples are in the fragments), the whole
  /// sample table once finished (one chunk per fragment that has sound).
  func audioTrack(_ moov: inout BoxBuilder, _ audio: AudioTrackFormat, fragmented: Bool) {
    let all = fragmented ? [] : fragments.filter { !$0.audioSizes.isEmpty }
    let count = all.reduce(0) { $0 + $1.audioSizes.count }
    let mediaTicks = UInt64(count) * UInt64(audio.frameLength)
    let movieTicks = UInt32(clamping: mediaTicks * UInt64(Self.movieTimescale) / UInt64(audio.sampleRate))
    moov.box("trak") { trak in
      trak.fullBox("tkhd", flags: 0x3) { tkhd in  // enabled, in movie
        tkhd.u32(created)
        tkhd.u32(created)
        tkhd.u32(Self.audioTrackID)
        tkhd.u32(0)
        tkhd.u32(movieTicks)
        tkhd.zeros(8)
        tkhd.u16(0)  // layer
        tkhd.u16(1)  // alternate group: the sound tracks
        tkhd.u16(0x0100)  // volume 1.0
        tkhd.u16(0)
        tkhd.unityMatrix()
        tkhd.u32(0)  // no width or height
        tkhd.u32(0)
      }
      trak.box("mdia") { mdia in
        mdia.fullBox("mdhd") { mdhd in
          mdhd.u32(created)
          mdhd.u32(created)
          mdhd.u32(UInt32(audio.sampleRate))
          mdhd.u32(UInt32(clamping: mediaTicks))
          mdhd.u16(0x55C4)  // language "und"
          mdhd.u16(0)
        }
        mdia.fullBox("hdlr") { hdlr in
          hdlr.u32(0)
          hdlr.fourCC("soun")
          hdlr.zeros(12)
          hdlr.bytes += Array("SoundHandler".utf8) + [0]
        }
        mdia.box("minf") { minf in
          minf.fullBox("smhd") { $0.zeros(4) }  // balance, reserved
          minf.box("dinf") { dinf in
            dinf.fullBox("dref") { dref in
              dref.u32(1)
              dref.fullBox("url ", flags: 1) { _ in }
            }
          }
          minf.box("stbl") { stbl in
            stbl.fullBox("stsd") { stsd in
              stsd.u32(1)
              stsd.bytes += audio.sampleEntry
            }
            stbl.fullBox("stts") { stts in
              stts.u32(count == 0 ? 0 : 1)
              if count > 0 {
                stts.u32(UInt32(count))
                stts.u32(UInt32(audio.frameLength))
              }
            }
            Self.sampleToChunk(&stbl, samplesPerChunk: all.map(\.audioSizes.count))
            let sizes = all.flatMap(\.audioSizes)
            stbl.fullBox("stsz") { stsz in
              stsz.u32(0)
              stsz.u32(UInt32(sizes.count))
              for size in sizes { stsz.u32(size) }
            }
            stbl.fullBox("co64") { co64 in
              co64.u32(UInt32(all.count))
              for fragment in all { co64.u64(fragment.audioOffset) }
            }
          }
        }
      }
    }
  }
}
