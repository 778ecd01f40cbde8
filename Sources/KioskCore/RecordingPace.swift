/// How many of the camera's frames a movie takes, so that the viewfinder keeps its rate while recording: the
/// person recording is watching themselves on it. The preview and the movie's encoders share the CPU the
/// service may use; where it is not enough for both, the movie takes fewer frames, spread evenly, and the
/// ones it leaves are counted as dropped (in its record and on the overlay) by whoever asks `take`.
///
/// At a recording's start the rate is chosen from what is known: the cores the service may use (its
/// affinity and cgroup quota, read then), what it used while idle, and the CPU a movie frame cost (the last
/// recording's; none before the first, when the movie starts at the camera's rate and the first window
/// teaches it). Then, window by window, the preview's frames shown are weighed against its idle rate:
/// short while the service uses nearly all it may, the movie's rate halves; at its idle rate for two windows
/// running with CPU to spare, the movie takes a quarter more, up to the camera's rate, and never fewer than a
/// frame every four seconds. A preview short while
/// the CPU is not spent is not the movie's doing (another process, the display), and the movie keeps its
/// rate; a preview at its rate while the CPU is all spent leaves nothing to take more with (on the board's
/// Pi-class quota, taking a second frame a second left the preview 88% of its idle rate).
///
/// Pure: the movie's driver feeds it the preview's counter and the kernel's CPU figures.
public struct RecordingPace: Sendable, Equatable {
  public static let window = Duration.seconds(1)
  /// The preview's rate while recording, as a share of its idle rate: below `short` the movie gives way,
  /// at `full` it may take more. Both above the 90% promised, so that a window's noise does not cross it.
  static let short = 0.93
  static let full = 0.97
  /// The service's CPU, as a share of what it may use, at which a short preview is the movie's doing.
  static let busy = 0.8
  /// The share of its cores the start's choice fills: a quota is spent in bursts.
  static let headroom = 0.9
  /// Idle windows the baseline averages.
  static let idleWindows = 3
  /// The fewest frames a second a movie takes: one every four seconds. Where the idle preview alone spends the
  /// CPU, every movie frame is the preview's loss: on the board's Pi-class quota, at one frame a second the
  /// preview kept 88-90% of its idle rate.
  static let slowest = 0.25

  /// What the driver reads at the end of a window.
  public struct Sample: Sendable, Equatable {
    public var at: Instant
    /// Frames the preview has shown so far, and whether the screen is showing the live picture.
    public var previewShown: Int
    public var previewLive: Bool
    /// CPU time of the whole service so far, and of the movie's threads (zero while not recording).
    public var serviceCPU: Duration
    public var movieCPU: Duration

    public init(at: Instant, previewShown: Int, previewLive: Bool, serviceCPU: Duration, movieCPU: Duration) {
      self.at = at
      self.previewShown = previewShown
      self.previewLive = previewLive
      self.serviceCPU = serviceCPU
      self.movieCPU = movieCPU
    }
  }

  /// One idle window: the preview's frames shown a second and the service's cores used.
  struct Idle: Sendable, Equatable {
    var shown: Double
    var cores: Double
  }

  struct Recording: Sendable, Equatable {
    var budget: Double
    var taken = 0
    var takenInWindow = 0
    var movieCPU = Duration.zero
    var goodWindows = 0
    var learned = false
  }

  /// The camera's frames a second: the most a movie takes.
  public let cameraRate: Int
  /// Frames a second the movie takes now, 1 to `cameraRate`.
  public private(set) var rate: Double
  /// The CPU one movie frame cost, learned while recording.
  public private(set) var costPerFrame: Duration?
  private var credit = 0.0
  private var idle: [Idle] = []
  private var last: Sample?
  private var recording: Recording?

  public init(cameraRate: Int) {
    self.cameraRate = max(1, cameraRate)
    rate = Double(self.cameraRate)
  }

  /// Whether a window has ended at `time`: then the driver reads a sample for `observe`.
  public func windowDue(at time: Instant) -> Bool {
    guard let last else { return true }
    return time - last.at >= Self.window
  }

  /// The preview's idle rate and the service's idle cores, averaged over the last idle windows.
  var baseline: Idle? {
    guard !idle.isEmpty else { return nil }
    let count = Double(idle.count)
    return Idle(shown: idle.map(\.shown).reduce(0, +) / count, cores: idle.map(\.cores).reduce(0, +) / count)
  }

  /// A recording starts, with `budget` cores for the service: the movie's first rate, and the reason for the log.
  public mutating func start(budget: Double) -> String {
    recording = Recording(budget: budget)
    // The window in progress mixes idle and recording: the first recording window starts at the next sample.
    last = nil
    defer { credit = 1 - rate / Double(cameraRate) }  // the first frame is always the movie's
    // Without a viewfinder (no display, or nothing shown) there is nothing to give way to.
    guard let baseline, baseline.shown >= 1, let costPerFrame else {
      rate = Double(cameraRate)
      let reason =
        baseline.map { $0.shown < 1 ? "no preview shown" : "a movie frame's CPU not known yet" } ?? "no idle preview measured"
      return "movie pace: \(cameraRate) frames a second, the camera's (\(reason))"
    }
    rate = model(budget: budget, idleCores: baseline.cores, cost: costPerFrame)
    return "movie pace: \(Self.figure(rate)) of \(cameraRate) frames a second to start (\(Self.figure(budget)) cores, "
      + "\(Self.figure(baseline.cores)) used idle, \(Self.figure(costPerFrame.seconds * 1000)) ms a movie frame)"
  }

  /// The recording has stopped: what follows is idle again, from the next sample.
  public mutating func stop() {
    recording = nil
    last = nil
  }

  /// One of the camera's frames for the movie: whether the movie takes it. Spread evenly at any rate.
  public mutating func take() -> Bool {
    guard recording != nil else { return true }
    credit += rate / Double(cameraRate)
    guard credit >= 1 else { return false }
    credit -= 1
    recording?.taken += 1
    recording?.takenInWindow += 1
    return true
  }

  /// A window's end: idle, it joins the baseline; recording, the movie's cost is learned and its rate
  /// decided. Returns what changed, for the log.
  public mutating func observe(_ sample: Sample) -> String? {
    defer { last = sample }
    guard let last, sample.at > last.at else { return nil }
    let seconds = (sample.at - last.at).seconds
    let shown = Double(sample.previewShown - last.previewShown) / seconds
    let cores = max(0, (sample.serviceCPU - last.serviceCPU).seconds) / seconds
    guard var recording else {
      if sample.previewLive && last.previewLive {
        idle.append(Idle(shown: shown, cores: cores))
        if idle.count > Self.idleWindows { idle.removeFirst() }
      }
      return nil
    }
    defer { self.recording = recording }
    recording.movieCPU += max(.zero, sample.movieCPU - last.movieCPU)
    let takenInWindow = recording.takenInWindow
    recording.takenInWindow = 0
    let before = rate
    if recording.taken >= 3 { costPerFrame = recording.movieCPU / recording.taken }
    guard let baseline, baseline.shown >= 1, sample.previewLive, last.previewLive else { return nil }
    if !recording.learned, let costPerFrame {
      // The first window that knows a frame's cost: the start's choice, made late.
      recording.learned = true
      rate = min(rate, model(budget: recording.budget, idleCores: baseline.cores, cost: costPerFrame))
    }
    if shown < Self.short * baseline.shown && cores >= Self.busy * recording.budget {
      rate = max(Self.slowest, rate / 2)
      recording.goodWindows = 0
    } else if shown >= Self.full * baseline.shown && cores < Self.busy * recording.budget {
      recording.goodWindows += 1
      if recording.goodWindows >= 2 {
        rate = min(Double(cameraRate), rate + max(Self.slowest, rate / 4))
        recording.goodWindows = 0
      }
    } else {
      recording.goodWindows = 0
    }
    guard rate != before else { return nil }
    return "movie pace: \(Self.figure(rate)) frames a second (preview \(Self.figure(shown)) a second of "
      + "\(Self.figure(baseline.shown)) idle, \(Self.figure(cores)) of \(Self.figure(recording.budget)) cores, "
      + "\(takenInWindow) taken in the window)"
  }

  /// The rate the cores left after the idle service's use pay for, whole frames a second, or the slowest.
  func model(budget: Double, idleCores: Double, cost: Duration) -> Double {
    let left = budget * Self.headroom - idleCores
    guard cost > .zero else { return Double(cameraRate) }
    let paid = left / cost.seconds
    return min(Double(cameraRate), paid >= 1 ? paid.rounded(.down) : Self.slowest)
  }

  /// "30", "7.5", "0.25".
  static func figure(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let whole = "\(hundredths / 100)"
    switch hundredths % 100 {
    case 0: return whole
    case let part where part % 10 == 0: return whole + ".\(part / 10)"
    case let part: return whole + (part < 10 ? ".0\(part)" : ".\(part)")
    }
  }
}

extension Duration {
  /// The duration in seconds, as a Double.
  var seconds: Double {
    let (whole, attoseconds) = components
    return Double(whole) + Double(attoseconds) / 1e18
  }
}
