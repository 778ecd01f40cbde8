import Dispatch
import LinuxIO
import Synchronization

/// Frames read from a microphone: interleaved signed 16-bit, and when the first was captured.
public struct SoundPeriod: Sendable {
  public let samples: [Int16]
  public let frames: Int
  /// Nanoseconds on CLOCK_MONOTONIC, the clock of the camera's frames.
  public let time: Int64
}

/// A microphone being recorded, on a thread of its own: the event loop never waits on sound. Each period
/// goes to `deliver` on that thread as soon as it is read; when the device fails (pulled, gone), `ended`
/// is called once with why, and the thread ends. `stop` ends it from any thread but the loop's (it waits,
/// at most a wake-up of the thread, for the device to be closed, so the next movie can open it again).
public final class SoundCapture: Sendable {
  public let format: SoundFormat
  /// Set by `stop`, read by the thread at each wake-up; `done` is signalled once the device is closed.
  private final class Control: Sendable {
    let stopping = Atomic<Bool>(false)
    let done = DispatchSemaphore(value: 0)
  }
  private let control = Control()

  /// How long the thread sleeps in `snd_pcm_wait` before it looks at `stopping` again.
  static let wakeMilliseconds: Int32 = 100

  public init(
    device name: String, deliver: @escaping @Sendable (SoundPeriod) -> Void,
    ended: @escaping @Sendable (SoundError) -> Void
  ) throws(SoundError) {
    let pcm = try PCMDevice(name)
    try pcm.start()
    format = pcm.format
    let control = control
    OwnThread.start(name: "kioskcam.sound") {
      Self.run(pcm, control: control, deliver: deliver, ended: ended)
      pcm.close()
      control.done.signal()
    }
  }

  private static func run(
    _ pcm: PCMDevice, control: Control, deliver: @Sendable (SoundPeriod) -> Void,
    ended: @Sendable (SoundError) -> Void
  ) {
    let chunk = max(256, pcm.format.periodFrames)
    var buffer = [Int16](repeating: 0, count: chunk * pcm.format.channels)
    do throws(SoundError) {
      while !control.stopping.load(ordering: .relaxed) {
        guard try pcm.wait(milliseconds: wakeMilliseconds) else { continue }
        while true {
          let frames = try pcm.read(into: &buffer, frames: chunk)
          guard frames > 0 else { break }
          guard let next = pcm.nextFrameTime() else { continue }
          let time = next - Int64(frames) * 1_000_000_000 / Int64(pcm.format.sampleRate)
          deliver(SoundPeriod(samples: Array(buffer[0..<frames * pcm.format.channels]), frames: frames, time: time))
        }
      }
    } catch {
      ended(error)
    }
  }

  /// Ends the capture and closes the device.
  public func stop() {
    guard !control.stopping.exchange(true, ordering: .relaxed) else { return }
    control.done.wait()
  }

  deinit { stop() }
}
