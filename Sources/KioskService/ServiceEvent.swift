import Capture
import CameraRoll
import Imaging
import JPEGCodec
import KioskCore
import LinuxIO
import Preview

/// What drivers post: the kiosk's own events, and what only the service's wiring needs to hear (a frame
/// for the preview, a probe for the gate, a worker's result). Handled one at a time, in the order posted.
enum ServiceEvent: Sendable {
  /// For the core as it is.
  case kiosk(Event)
  /// A fresh probe of one capability: the gate decides what changed and which modes follow.
  case capability(ProbeResult)
  /// A good frame is in the camera's ring: the core, then the preview, then the watchdog hear of it.
  case cameraFrame(FrameInfo)
  /// The camera streams again, or in another format or zoom: the preview fits itself anew.
  case streamChanged
  /// The camera went away (or is not there at start): the watchdog is told the loop is only retrying.
  case cameraUnavailable(String)
  /// The display was opened or let go.
  case displayChanged
  /// A page flip completed.
  case flipDone
  /// A preview picture a worker drew (or could not).
  case previewDrawn(PreviewPipeline.Outcome)
  /// A device node appeared in one of the watched folders (/dev, /dev/v4l/by-id, /dev/dri).
  case nodeAppeared(directory: String, name: String)
  /// From the still writer.
  case stillSaved(RollItem, FrameInfo, pressedAt: Instant)
  case stillFailed(String)
  /// The saved still read back and decoded for the photo review (posted before `stillSaved`).
  case stillDecoded(name: String, XRGBImage)
  /// From the movie writer.
  case movieSaved(MovieSummary)
  case movieFailed(String)
  /// The roll's storage came back and what its loss left there was put right: review lists the card again.
  case rollRecovered
  /// A write on the roll failed because the card did (EIO, read-only), not because it was full: the kiosk
  /// decides what follows.
  case storageFailed(StorageFault, RollWrite, String)
  /// From review's reader: an item decoded (a photo's thumbnail first), or why it could not be.
  case viewed(ViewedItem)
  case viewFailed(path: String, reason: String)
  /// A movie frame review's playback asked the viewer queue for.
  case playbackFrame(PlaybackFrame)
  /// The roll as the writer listed it, and a delete that finished.
  case rollListed([RollEntry])
  case rollChanged(deleted: String)
}

extension Mailbox<ServiceEvent> {
  /// Every write on the roll reports an error through here: the card's failure goes to the kiosk, whatever
  /// else the writer does with the error (a "Save failed", a line in the log).
  func reportCardFailure(_ error: any Error, during write: RollWrite) {
    if let fault = StorageFault(error) { post(.storageFailed(fault, write, "\(error)")) }
  }
}
