import CameraRoll
import KioskCore
import LinuxIO
import MediaFiles

/// A movie's codec as the record gives it.
public struct MovieEncoding: Sendable, Equatable, CustomStringConvertible {
  public var codec: MovieCodec
  public var profile: String?
  public var level: String?
  public var bitRate: Int?
  /// The x264 preset, measured to hold the camera's rate on this board.
  public var preset: String?
  /// The sound, nil for a silent movie.
  public var audio: AudioEncoding?

  public static let motionJPEG = MovieEncoding(codec: .mjpeg)

  /// "H.264 High 3.0, 691 kbit/s", "Motion-JPEG".
  public var description: String {
    guard codec == .h264 else { return "Motion-JPEG" }
    return "H.264 \(profile ?? "") \(level ?? "")" + (bitRate.map { ", \($0 / 1000) kbit/s" } ?? "")
      + (preset.map { ", preset \($0)" } ?? "") + (audio.map { ", sound \($0)" } ?? "")
  }

  /// What a file's sample entry says: a recovered movie's codec, and for H.264 the profile and level in its avcC.
  init(_ format: VideoTrackFormat, audio: AudioTrackFormat? = nil) {
    guard format.codec == "avc1", let configuration = format.avcConfiguration else {
      self.init(codec: .mjpeg)
      return
    }
    self.init(codec: .h264, profile: configuration.profileName, level: configuration.levelName)
    self.audio = audio.map { AudioEncoding(sampleRate: $0.sampleRate, channels: $0.channels) }
  }

  init(codec: MovieCodec, profile: String? = nil, level: String? = nil, bitRate: Int? = nil, preset: String? = nil) {
    self.codec = codec
    self.profile = profile
    self.level = level
    self.bitRate = bitRate
    self.preset = preset
  }
}

/// What a finished (or recovered) movie is, for the loop and the record.
public struct MovieSummary: Sendable {
  public let item: RollItem
  public let frames: Int
  public let dropped: Int
  public let seconds: Double
  public let recovered: Bool
  /// A write that failed (ENOSPC, EIO): the file is whole up to the fragment before it.
  public let writeError: String?
  /// What the record needs besides.
  let roll: CameraRoll
  public let bytes: Int
  let width: Int
  let height: Int
  /// Wall-clock time of the first frame; empty for a recovered movie, whose start nobody wrote down.
  let captured: String
  let sourceFormat: String
  let firstSequence: UInt32
  let uniqueID: String
  /// How it was encoded, for the record.
  var encoding = MovieEncoding.motionJPEG
  /// The sound track's length, by its sample count; 0 without one.
  var audioSeconds = 0.0

  /// Seconds to the millisecond, as the log and the record give them.
  public var roundedSeconds: Double { (seconds * 1000).rounded() / 1000 }

  var record: ItemRecord {
    var record = ItemRecord(
      mediaType: MediaKind.movie.rawValue, file: item.relativePath, bytes: bytes, width: width, height: height,
      captured: captured, shutterLagMilliseconds: 0, sourceFormat: sourceFormat, crop: nil,
      frameSequence: firstSequence, exposure100Microseconds: nil, gain: nil, uniqueID: uniqueID)
    record.frames = frames
    record.droppedFrames = dropped
    record.durationSeconds = roundedSeconds
    record.recovered = recovered
    record.codec = encoding.codec.rawValue
    record.profile = encoding.profile
    record.level = encoding.level
    record.bitRate = encoding.bitRate
    record.audio = encoding.audio?.codec ?? "none"
    if let audio = encoding.audio {
      record.audioProfile = audio.profile
      record.audioSampleRate = audio.sampleRate
      record.audioChannels = audio.channels
      record.audioDurationSeconds = (audioSeconds * 1000).rounded() / 1000
    }
    return record
  }

  /// Logs a published movie and appends its record; call it on a worker (the record is fsynced). Returns why
  /// the record could not be written, if it could not: the movie is published all the same.
  @discardableResult
  public static func report(_ result: Result<MovieSummary, RollError>) -> RollError? {
    let movie: MovieSummary
    switch result {
    case .failure(let error):
      log("movie not saved: \(error)")
      return nil
    case .success(let summary):
      movie = summary
    }
    log(
      "movie \(movie.item.relativePath) \(movie.recovered ? "recovered, " : "")frames \(movie.frames), dropped \(movie.dropped), \(movie.roundedSeconds) s"
        + (movie.writeError.map { ", write failed: \($0) (kept up to the last fragment)" } ?? ""))
    do {
      try movie.roll.append(movie.record)
      return nil
    } catch {
      log("record of \(movie.item.relativePath) not written: \(error)")
      return error
    }
  }
}
