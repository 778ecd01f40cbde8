import CLinuxIO
#if canImport(Glibc)
  import Glibc
#endif

/// What a watched descriptor is ready for, as epoll reports it.
public struct Readiness: OptionSet, Sendable, CustomStringConvertible {
  public let rawValue: UInt32
  public init(rawValue: UInt32) { self.rawValue = rawValue }
  public static let readable = Readiness(rawValue: EPOLLIN.rawValue)
  public static let priority = Readiness(rawValue: EPOLLPRI.rawValue)
  public static let writable = Readiness(rawValue: EPOLLOUT.rawValue)
  public static let error = Readiness(rawValue: EPOLLERR.rawValue)
  public static let hangUp = Readiness(rawValue: EPOLLHUP.rawValue)
  public var description: String {
    let names: [(Readiness, String)] = [
      (.readable, "in"), (.priority, "pri"), (.writable, "out"), (.error, "err"), (.hangUp, "hup"),
    ]
    return names.filter { contains($0.0) }.map(\.1).joined(separator: "|")
  }
}

/// The one loop thread: waits on one epoll set and calls each descriptor's handler on readiness.
///
/// Not thread-safe by design: everything registered here belongs to the thread that calls `run()`.
/// Other threads reach the loop only through a `Mailbox`.
///
/// Each registration carries a generation beside its descriptor in `epoll_data`. One `epoll_wait` returns a
/// batch; a handler early in it may unwatch and close a descriptor and open another that gets the same number
/// (the camera button does, reopening a camera). The batch's later events for the old one then carry the old
/// generation and are dropped, instead of reaching the new descriptor's handler as its own errors or hang-ups.
public final class EventLoop {
  public typealias Handler = (Readiness) -> Void

  private struct Registration {
    let generation: UInt32
    let handler: Handler
  }

  private let epoll: OwnedFD
  private var registrations: [CInt: Registration] = [:]
  private var lastGeneration: UInt32 = 0
  private var stopping = false

  /// Events dropped because they were collected for a registration that has since been removed or replaced.
  public private(set) var staleEvents = 0

  public init() throws(SystemCallError) {
    epoll = OwnedFD(adopting: try systemCall("epoll_create1") { epoll_create1(CInt(EPOLL_CLOEXEC)) })
  }

  /// Calls `handler` whenever `fd` is ready for `interest` (errors and hang-ups are always reported).
  public func watch(_ fd: FileDescriptor, for interest: Readiness = .readable, _ handler: @escaping Handler)
    throws(SystemCallError)
  {
    // A change of interest keeps its generation: what was collected is for the same open descriptor.
    let existing = registrations[fd.rawValue]
    let generation: UInt32
    if let existing {
      generation = existing.generation
    } else {
      lastGeneration &+= 1
      generation = lastGeneration
    }
    var event = epoll_event()
    event.events = interest.rawValue
    event.data.u64 = UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd.rawValue))
    let operation = existing == nil ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
    try systemCall("epoll_ctl \(fd)") { epoll_ctl(epoll.raw, operation, fd.rawValue, &event) }
    registrations[fd.rawValue] = Registration(generation: generation, handler: handler)
  }

  /// Forgets `fd`; safe to call from inside a handler, and for a descriptor already closed.
  public func unwatch(_ fd: FileDescriptor) {
    guard registrations.removeValue(forKey: fd.rawValue) != nil else { return }
    _ = epoll_ctl(epoll.raw, EPOLL_CTL_DEL, fd.rawValue, nil)
  }

  /// Runs until `stop()` is called from a handler.
  public func run() throws(SystemCallError) {
    stopping = false
    var events = [epoll_event](repeating: epoll_event(), count: 32)
    while !stopping {
      // The throwing call stays outside the buffer's closure: Swift 6.0's withUnsafeMutableBufferPointer
      // rethrows untyped errors, which a typed throws cannot pass on.
      let count = try systemCall("epoll_wait") {
        events.withUnsafeMutableBufferPointer { buffer in epoll_wait(epoll.raw, buffer.baseAddress!, CInt(buffer.count), -1) }
      }
      for index in 0..<Int(count) {
        let data = events[index].data.u64
        let fd = CInt(bitPattern: UInt32(truncatingIfNeeded: data))
        // A handler earlier in this batch may have unwatched this descriptor, or watched a new one in its place.
        guard let registration = registrations[fd], registration.generation == UInt32(truncatingIfNeeded: data >> 32)
        else {
          staleEvents += 1
          continue
        }
        registration.handler(Readiness(rawValue: events[index].events))
        if stopping { break }
      }
    }
  }

  public func stop() { stopping = true }
}

/// Nanoseconds on CLOCK_MONOTONIC: the clock of V4L2 buffer and GPIO event timestamps.
public func monotonicNanoseconds() -> Int64 {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}
