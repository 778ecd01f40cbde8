/// How long a retry waits: doubling from `first` up to `maximum`, back to `first` once it worked. A device
/// that is gone is tried often at first (an unplug and replug takes seconds) and then less, so a camera that
/// stays away does not have every capture device re-probed every two seconds for hours.
public struct Backoff: Sendable, Equatable {
  public let first: Duration
  public let maximum: Duration
  public private(set) var next: Duration

  public init(first: Duration, maximum: Duration) {
    self.first = first
    self.maximum = maximum
    next = first
  }

  /// The wait before this retry; the one after it waits twice as long, up to the maximum.
  public mutating func take() -> Duration {
    defer { next = min(next * 2, maximum) }
    return next
  }

  public mutating func reset() { next = first }
}

/// The service's polls and settle times, in one place so they are read and changed as a policy.
public enum Intervals {
  /// A lost camera is tried again after this, then less often (a node appearing in /dev is tried at once).
  public static let cameraRetry = Backoff(first: .seconds(2), maximum: .seconds(10))
  /// A capture node appeared: a moment for the driver to finish registering and for udev to set its owner.
  public static let cameraNodeSettle = Duration.milliseconds(100)
  /// A gpiochip node appeared: a moment for the chip to name its lines and udev to give it to the gpio group.
  public static let gpioChipSettle = Duration.milliseconds(200)
  /// Button lines are checked for a chip that went away, and what is missing is requested again.
  public static let buttonCheck = Duration.seconds(2)
  /// Free space and the roll's storage; every second while recording, which fills a card at megabytes a
  /// second and must stop at the reserve with room left to finish the file.
  public static let storageCheck = Duration.seconds(5)
  public static let storageCheckRecording = Duration.seconds(1)
  /// The roll listed again for review mode: items copied in or deleted over SSH reach it too.
  public static let rollListing = Duration.seconds(5)
  /// The display's connector status (one cheap ioctl; bochs-drm sends no hot-plug uevent).
  public static let connectorCheck = Duration.seconds(1)
  /// The display is opened afresh this often while it is gone (opening probes, which reads EDID).
  public static let displayRetry = Duration.seconds(5)
}

extension Duration {
  /// For timerfd: whole nanoseconds, at least one (zero would disarm the timer).
  public var timerNanoseconds: Int64 { max(1, nanosecondsClamped) }
}
