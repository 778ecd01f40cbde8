import Imaging
import LinuxIO

/// Where a worker draws a finished picture: a buffer lent for it (the display's, or the bench's memory).
public protocol PreviewCanvas: AnyObject, Sendable {
  var target: DrawTarget { get }
  /// Returns the canvas to whoever lent it, unshown.
  func giveBack()
}

/// The preview drawn off the loop: the loop hands each picture over and later flips what comes back. Workers
/// decode (MJPEG), then take a canvas, scale, convert and draw the overlay into it, and report; the newest
/// picture waiting replaces an older one, and pictures are drawn in parallel on `workers` threads.
public final class PreviewPipeline: Sendable {
  public enum Outcome: Sendable {
    /// Drawn and ready to flip; the canvas stays lent until it is flipped or given back.
    case drawn(PreviewTag, any PreviewCanvas)
    /// Decoded, but every canvas was on screen, queued or being drawn: not drawn.
    case noCanvas(PreviewTag)
    case failed(PreviewTag, String)
  }

  private let handOver: NewestWins<Work>
  public var workers: Int { handOver.workers }

  private struct Work: Sendable {
    let job: PreviewJob
    let lend: @Sendable () -> (any PreviewCanvas)?
  }

  /// Each worker's renderer is its own: touched by that worker's thread only.
  private final class Renderers: @unchecked Sendable {
    let each: [PreviewRenderer]
    init(_ count: Int, decoder: FrameDecoderChoice) { each = (0..<count).map { _ in PreviewRenderer(decoder: decoder) } }
  }

  /// `done` is called on the worker's thread (post it to the loop).
  /// `decoder`: what each worker decodes compressed frames with.
  public init(workers: Int, decoder: FrameDecoderChoice = .turboJPEG, done: @escaping @Sendable (Outcome) -> Void) {
    let renderers = Renderers(workers, decoder: decoder)
    // At the loop's priority: a recording's encoders give way to the viewfinder (`ThreadPriority.yielding`).
    handOver = NewestWins(workers: workers, name: "kioskcam.preview") { index, work in
      done(Self.render(work.job, with: renderers.each[index], lend: work.lend))
    }
  }

  /// Never blocks. `lend` is called on a worker, once the picture is decoded. Returns the tag of the picture
  /// this one replaced before any worker took it (a frame skipped), if there was one.
  public func submit(_ job: PreviewJob, lend: @escaping @Sendable () -> (any PreviewCanvas)?) -> PreviewTag? {
    handOver.submit(Work(job: job, lend: lend))?.job.tag
  }

  /// Workers end after the picture in hand; what comes back after this is still reported through `done`.
  public func stop() { _ = handOver.stop() }

  private static func render(
    _ job: PreviewJob, with renderer: PreviewRenderer, lend: () -> (any PreviewCanvas)?
  ) -> Outcome {
    let prepared: PreviewRenderer.Prepared
    do {
      prepared = try renderer.prepare(job)
    } catch {
      return .failed(job.tag, "\(error)")
    }
    guard let canvas = lend() else { return .noCanvas(job.tag) }
    renderer.draw(prepared, into: canvas.target)
    return .drawn(job.tag, canvas)
  }
}
