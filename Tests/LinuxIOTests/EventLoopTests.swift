import Foundation
import LinuxIO
import Testing

/// The loop's dispatch against real pipes and a real epoll set: no fakes between the kernel and the handlers.
@Suite struct EventLoopTests {
  /// A pipe's two ends, as plain descriptors the test closes itself.
  struct Pipe {
    let read: Int32
    let write: Int32
    init(read: Int32, write: Int32) { (self.read, self.write) = (read, write) }
    init() throws {
      var ends: [Int32] = [0, 0]
      guard pipe(&ends) == 0 else { throw POSIXError(.init(rawValue: errno)!) }
      (read, write) = (ends[0], ends[1])
    }
    func poke() { var byte: UInt8 = 1; _ = Glibc.write(write, &byte, 1) }
    /// Takes the byte `poke` wrote: epoll is level-triggered, and an unread pipe is ready at every wait.
    func drain() { var byte: UInt8 = 0; _ = Glibc.read(read, &byte, 1) }
    func close() { _ = Glibc.close(read); _ = Glibc.close(write) }
  }

  /// Two descriptors ready before the loop waits, so one `epoll_wait` returns both. Whichever handler runs
  /// first unwatches the other and puts a new pipe's read end, with nothing written to it, at its number
  /// (dup2, which closes the old one: what a close and a reopen that reuses the lowest free number do, without
  /// the test's other threads taking the number in between). The batch still holds the old descriptor's event: it must be dropped as stale, and
  /// the new handler must hear nothing (before registrations carried a generation, it heard .readable).
  @Test func anEventForAReplacedDescriptorIsDroppedNotHandedToItsSuccessor() throws {
    let loop = try EventLoop()
    let (first, second, stopper) = (try Pipe(), try Pipe(), try Pipe())
    defer { stopper.close() }
    first.poke()
    second.poke()
    var handled: [String] = []
    // The pipe whose handler ran keeps its descriptors; the other's were replaced (closed below, via `fresh`).
    defer { (handled == ["second"] ? second : first).close() }
    var successorHeard: [Readiness] = []
    var replacement: Pipe?

    func replace(_ victim: Pipe, after ran: Pipe, _ name: String) {
      ran.drain()
      handled.append(name)
      guard replacement == nil else { return }
      loop.unwatch(FileDescriptor(rawValue: victim.read))
      guard let fresh = try? Pipe(), dup2(fresh.read, victim.read) == victim.read else { return }
      _ = Glibc.close(fresh.read)
      _ = Glibc.close(victim.write)
      replacement = Pipe(read: victim.read, write: fresh.write)
      try? loop.watch(FileDescriptor(rawValue: victim.read)) { successorHeard.append($0) }
      // Stopping here would end the batch early and prove nothing: the stop comes in a later wait.
      stopper.poke()
    }
    try loop.watch(FileDescriptor(rawValue: first.read)) { _ in replace(second, after: first, "first") }
    try loop.watch(FileDescriptor(rawValue: second.read)) { _ in replace(first, after: second, "second") }
    try loop.watch(FileDescriptor(rawValue: stopper.read)) { _ in loop.stop() }
    try loop.run()

    let fresh = try #require(replacement, "the descriptor was replaced")
    defer { fresh.close() }
    #expect(handled.count == 1, "only the handler that ran first: \(handled)")
    #expect(successorHeard.isEmpty, "the new descriptor heard its predecessor's event: \(successorHeard)")
    #expect(loop.staleEvents == 1)
  }

  /// A change of interest on a live registration keeps its events: nothing counted stale, the handler runs.
  @Test func watchingAgainForAnotherInterestKeepsTheDescriptorsEvents() throws {
    let loop = try EventLoop()
    let channel = try Pipe()
    defer { channel.close() }
    channel.poke()
    var heard: [String] = []
    try loop.watch(FileDescriptor(rawValue: channel.read)) { _ in heard.append("old") }
    try loop.watch(FileDescriptor(rawValue: channel.read), for: [.readable, .priority]) { _ in
      heard.append("new")
      loop.stop()
    }
    try loop.run()
    #expect(heard == ["new"])
    #expect(loop.staleEvents == 0)
  }
}
