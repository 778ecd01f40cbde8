/// The hardware buttons by what they mean to the kiosk: the image picker's camera controls, as hardware.
public enum ButtonRole: String, Sendable, CaseIterable {
  case shutter, mode, cancel, camera
  case zoomIn = "zoom-in"
  case zoomOut = "zoom-out"
}

public enum ButtonEdge: Sendable, Equatable {
  /// The line became active (the button went down).
  case pressed
  case released
}

/// What the kiosk is for at the moment; the mode button cycles through those whose capabilities are present.
public enum KioskMode: String, Sendable, CaseIterable {
  case still, movie, review
}

/// Optional lamps driven by output lines.
public enum Output: String, Sendable, CaseIterable {
  /// On while a movie records.
  case tally
  /// On while the kiosk can take a picture.
  case ready
  /// Lit from the press until the still's frame is taken; and while recording, if configured as a light.
  case flash
}

/// What the screen shows, in the kiosk's terms; the display adapter turns it into pixels.
public enum Screen: Sendable, Equatable {
  /// The live preview in a capture mode.
  case live(KioskMode)
  /// Counting down to a still: whole seconds left.
  case countdown(secondsLeft: Int)
  /// The photo just taken, until "use photo" (any button or the timeout) or "retake" (cancel).
  case checkingPhoto(String)
  /// Recording since the instant, stopping by itself at the limit.
  case recording(since: Instant, until: Instant)
  /// Reviewing the roll (review mode): one item full screen.
  case reviewing(ReviewView)
  /// A full-screen state in plain words: "Camera not available", "Storage full", "Save failed".
  case message(String)
}

/// How the card failed a write: all the kiosk needs of the adapter's errno to decide.
public enum StorageFault: String, Sendable, Equatable {
  /// EIO: the card could not store what it was given.
  case inputOutput = "I/O error"
  /// EROFS: the file system turned read-only under the roll (ext4 does after its first failed write).
  case readOnly = "read-only file system"
}

/// The roll's writes, each of which can find the card failed.
public enum RollWrite: String, Sendable, Equatable {
  case still, movie, record, delete, retake, recovery
}

/// Everything that can happen to the kiosk, each with its time when time matters.
public enum Event: Sendable, Equatable {
  /// An edge on a button line, with the kernel's timestamp.
  case edge(ButtonRole, ButtonEdge, at: Instant)
  /// `kioskcam shutter`, `mode M`, `zoom Z` or `status` over the control socket, at the loop's clock; `client`
  /// is the control server's name for the connection, handed back with the reply.
  case remote(ControlRequest, client: Int = 0, at: Instant)
  /// A frame arrived from the camera and is in the recent-frames ring.
  case frame(FrameInfo)
  /// The loop's clock, at the deadline the kiosk asked for or later.
  case tick(Instant)
  case stillSaved(name: String, at: Instant)
  case saveFailed(reason: String, at: Instant)
  case movieSaved(name: String, at: Instant)
  case movieFailed(reason: String, at: Instant)
  /// The movie being recorded came near the largest file the roll's file system keeps (FAT's 4 GiB).
  case movieFileFull(at: Instant)
  /// The modes whose capabilities are present now; sent at start and whenever the gate's verdict changes.
  case available(Set<KioskMode>, at: Instant)
  case cameraLost(reason: String, at: Instant)
  case cameraBack(at: Instant)
  /// Free space on the roll went below the configured reserve (`full`), or came back above it.
  case storage(full: Bool, detail: String, at: Instant)
  /// The roll's storage as a check found it: there (mounted as configured, writable, its folder there) or gone
  /// (unmounted, pulled, read-only, its folder gone); `mounts` counts the mount table's changes seen so far.
  case rollStorage(available: Bool, mounts: Int, detail: String, at: Instant)
  /// A write on the roll failed because the card did, not because it was full; `mounts` is the count when
  /// the failure was heard of.
  case storageFailed(StorageFault, during: RollWrite, detail: String, mounts: Int, at: Instant)
  /// The roll's published items as listed now (at start and after every change the service makes or sees).
  case roll([RollEntry], at: Instant)
  /// The movie being played in review mode reached its end.
  case playbackEnded(at: Instant)
  /// These buttons' lines went away with their GPIO chip: whatever they were doing is forgotten, not finished.
  case buttonsLost([ButtonRole], at: Instant)

  /// When it happened, on CLOCK_MONOTONIC; a frame's is its capture time.
  public var time: Instant {
    switch self {
    case .edge(_, _, let at), .remote(_, _, let at), .stillSaved(_, let at), .saveFailed(_, let at),
      .movieSaved(_, let at), .movieFailed(_, let at), .movieFileFull(let at), .available(_, let at), .cameraLost(_, let at),
      .cameraBack(let at), .tick(let at), .storage(_, _, let at), .rollStorage(_, _, _, let at), .roll(_, let at),
      .storageFailed(_, _, _, _, let at),
      .playbackEnded(let at), .buttonsLost(_, let at):
      at
    case .frame(let frame): frame.timestamp
    }
  }
}

/// What the kiosk asks the devices to do.
public enum Action: Sendable, Equatable {
  /// Encode and publish the ring's frame as a still; `pressedAt` is the moment it stands for.
  case saveStill(FrameInfo, pressedAt: Instant)
  /// "Retake": remove the photo just published; its number is not reused.
  case discardStill(String)
  /// Review mode's confirmed delete: remove the item and its record; its number is not reused.
  case deleteItem(String)
  case startMovie(at: Instant)
  case stopMovie(at: Instant)
  /// The roll's storage is back: publish what its loss left there (an interrupted recording), sweep its
  /// leftovers and move the counter past every number on it.
  case recoverRoll
  /// The `camera` button: stream from the next configured camera.
  case nextCamera
  case show(Screen)
  case light(Output, Bool)
  case log(String)
  /// A zoom button or `kioskcam zoom`: the service steps its `Zoom` and crops preview and stills.
  case zoom(ZoomChange)
  /// The ring's frame belongs to the movie being recorded: it was taken between the start and the stop.
  case recordFrame(FrameInfo)
  /// The answer to a control request, for the connection the request came in on.
  case reply(to: Int, ControlReply)
}
