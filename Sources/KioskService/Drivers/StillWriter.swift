#if canImport(Glibc)
  import Glibc
#endif
import CameraRoll
import Capture
import Dispatch
import JPEGCodec
import KioskCore
import LinuxIO
import MediaFiles

/// Stills: the ring's frame encoded, given its EXIF and published on the roll's writer, never on the loop;
/// the result, and the saved photo read back for its check (use photo / retake), are posted back.
final class StillWriter: StillDriver {
  private let config: Config
  private let source: any FrameSource
  private let roll: CameraRoll?
  private let writer: DispatchQueue
  private let results: Mailbox<ServiceEvent>
  private let post: (ServiceEvent) -> Void
  /// Where a photo review must cover on the panel; nil: no review to show (no display, or review is off).
  private let photoCover: () -> (width: Int, height: Int)?
  private(set) var saved = 0
  private(set) var failures = 0
  private(set) var lastShutterLag: Duration?

  init(
    config: Config, source: any FrameSource, roll: CameraRoll?, writer: DispatchQueue, results: Mailbox<ServiceEvent>,
    photoCover: @escaping () -> (width: Int, height: Int)?, post: @escaping (ServiceEvent) -> Void
  ) {
    self.config = config
    self.source = source
    self.roll = roll
    self.writer = writer
    self.results = results
    self.photoCover = photoCover
    self.post = post
  }

  func save(_ frame: FrameInfo, pressedAt: Instant) {
    guard let roll, let captured = source.captured(frame), let facts = source.stillFacts() else {
      post(.stillFailed("frame \(frame.sequence) no longer in the ring"))
      return
    }
    // The two frames around the press, from the driver's own timestamps: the log shows the choice was the nearer.
    let (before, after) = source.neighbours(of: pressedAt)
    func offset(_ frame: FrameInfo?) -> String {
      frame.map { "\($0.sequence) at \(milliseconds($0.timestamp - pressedAt)) ms" } ?? "none"
    }
    log("press at \(pressedAt): frame before \(offset(before)), frame after \(offset(after)); saving \(frame.sequence)")
    let still = captured.still
    let controls = facts.controls
    let capturedAt = WallClock.dateTime(atMonotonic: frame.timestamp)
    let uniqueID = WallClock.uniqueID()
    let orientation = ExifOrientation(mountingRotation: config.camera.rotation) ?? .normal
    let (model, quality, zoomCrop, digitalZoom) = (facts.card, config.capture.jpegQuality, captured.crop, captured.zoomFactor)
    let lag = milliseconds(frame.timestamp - pressedAt)
    let results = results
    let cover = config.capture.photoCheck > .zero ? photoCover() : nil
    // On as many cores as the preview draws on: the press's picture is ready sooner, in the same CPU time.
    let cores = ScreenSink.workers(for: config)
    writer.async {
      do {
        let encoded = try StillPipeline.encode(still, quality: quality, crop: zoomCrop, bands: cores)
        let metadata = ExifMetadata(
          make: "kioskcam", model: model, software: "kioskcam", captured: capturedAt, orientation: orientation,
          pixelWidth: encoded.width, pixelHeight: encoded.height, uniqueID: uniqueID,
          exposure100Microseconds: controls.exposure100Microseconds, digitalZoomHundredths: digitalZoom)
        let file = try StillPipeline.withExif(encoded, metadata)
        let item = try roll.publish(file, kind: .still)
        let record = ItemRecord(
          mediaType: MediaKind.still.rawValue, file: item.relativePath, bytes: file.count, width: encoded.width,
          height: encoded.height, captured: capturedAt.isoText, shutterLagMilliseconds: lag,
          sourceFormat: still.format.fourcc, crop: zoomCrop.map { "\($0.width)x\($0.height)+\($0.x)+\($0.y)" },
          frameSequence: frame.sequence,
          exposure100Microseconds: controls.exposure100Microseconds, gain: controls.gain, uniqueID: uniqueID)
        do {
          try roll.append(record)
        } catch {
          // The picture is whole and published; only its record is missing, and `roll list` still shows it.
          log("record of \(item.relativePath) not written: \(error)")
          results.reportCardFailure(error, during: .record)
        }
        if let (width, height) = cover {
          // Read back from the roll, so the check shows the file people will pull, not our memory of it.
          do {
            let saved = try OwnedFD(opening: "\(roll.root)/\(item.relativePath)", flags: O_RDONLY).readToEnd()
            let picture = try PictureDecode.xrgb(saved, covering: width, height, threads: cores)
            results.post(.stillDecoded(name: item.relativePath, picture))
          } catch {
            log("review of \(item.relativePath): \(error)")
          }
        }
        results.post(.stillSaved(item, frame, pressedAt: pressedAt))
      } catch {
        results.post(.stillFailed("\(error)"))
        results.reportCardFailure(error, during: .still)
      }
    }
  }

  /// "Retake": the photo just published goes; its number is not reused.
  func discard(_ name: String) {
    guard let roll else { return }
    let results = results
    // On the writer, behind the save that published it.
    writer.async {
      do {
        try roll.discard(name)
      } catch {
        log("retake: \(error)")
        results.reportCardFailure(error, during: .retake)
      }
      results.post(.rollListed(RollViewer.entries(root: roll.root)))
    }
  }

  func saved(_ item: RollItem, _ frame: FrameInfo, pressedAt: Instant) {
    let lag = frame.timestamp - pressedAt
    saved += 1
    lastShutterLag = lag
    log("still \(item.relativePath) frame \(frame.sequence) shutter lag \(milliseconds(lag)) ms")
  }

  func failed() { failures += 1 }
}
