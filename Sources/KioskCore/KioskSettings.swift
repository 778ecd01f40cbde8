/// How the kiosk behaves; from the configuration.
public struct KioskSettings: Sendable, Equatable {
  public var gestures: GestureTiming
  /// Seconds counted down before a still; zero takes it at the press.
  public var countdown: Duration
  /// How long a photo just taken stays on screen for its check, "use photo / retake"; zero skips it.
  public var photoCheck: Duration
  /// A movie stops by itself after this long (videoMaximumDuration).
  public var movieMaximum: Duration
  /// How long a transient message ("Save failed") stays before the live picture returns.
  public var messageTime: Duration
  /// A flash lamp is fitted: lit this long before the still's frame (nil = none, zero shutter lag).
  public var flashLead: Duration?
  /// The flash lamp is also lit while a movie records.
  public var flashForMovies: Bool
  /// How many cameras the `camera` button cycles through; with one, the button does nothing.
  public var cameras: Int
  /// Review mode with no button pressed (and no movie playing) for this long goes back to the live picture.
  public var reviewIdle: Duration
  /// Whether review mode may delete (long press on cancel, then shutter to confirm).
  public var allowDelete: Bool

  public init(
    gestures: GestureTiming, countdown: Duration = .zero, photoCheck: Duration = .zero,
    movieMaximum: Duration = .seconds(600), messageTime: Duration = .seconds(3), flashLead: Duration? = nil,
    flashForMovies: Bool = false, cameras: Int = 1, reviewIdle: Duration = .seconds(60), allowDelete: Bool = false
  ) {
    self.cameras = cameras
    self.flashLead = flashLead
    self.flashForMovies = flashForMovies
    self.gestures = gestures
    self.countdown = countdown
    self.photoCheck = photoCheck
    self.movieMaximum = movieMaximum
    self.messageTime = messageTime
    self.reviewIdle = reviewIdle
    self.allowDelete = allowDelete
  }
}
