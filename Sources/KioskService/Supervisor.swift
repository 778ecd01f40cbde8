#if canImport(Glibc)
  import Glibc
#endif
import KioskCore
import LinuxIO

/// Tells systemd (or any supervisor speaking `sd_notify`) when the service is ready and alive, following
/// the pure `Supervision` rule. Without `$NOTIFY_SOCKET` (the board, a shell, BusyBox init) there is none.
final class Supervisor: SupervisorDriver {
  private let socket: NotifySocket
  private var rule = Supervision()
  private var timer: LoopTimer?
  private var sendFailed = false

  /// `cameraStreaming` is asked at start: a service that starts without its camera is ready on its screen state.
  init?(loop: EventLoop, cameraStreaming: Bool) throws(SystemCallError) {
    let address = getenv("NOTIFY_SOCKET").map { String(cString: $0) } ?? ""
    if address.isEmpty { return nil }
    // A supervisor address the service cannot use is the supervisor's problem, not a reason to stop the kiosk:
    // libsystemd's sd_notify likewise only returns an error.
    let socket: NotifySocket
    do {
      socket = try NotifySocket(address: address)
    } catch {
      log("supervisor: \(error); not notifying")
      return nil
    }
    self.socket = socket
    let interval = watchdogPetInterval(
      usec: getenv("WATCHDOG_USEC").map { String(cString: $0) },
      pid: getenv("WATCHDOG_PID").map { String(cString: $0) }, ownPID: Int(getpid()))
    log("supervisor: notifying \(address)\(interval.map { ", watchdog petted every \($0) while frames arrive" } ?? "")")
    if let interval {
      let nanoseconds = interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000
      let timer = try LoopTimer(loop: loop) { [unowned self] in send(rule.watchdogTick()) }
      try timer.arm(after: nanoseconds, interval: nanoseconds)
      self.timer = timer
    }
    if !cameraStreaming { cameraUnavailable("not streaming at start") }
  }

  func frameArrived(previewShown: Bool, previewExpected: Bool) {
    send(rule.frameArrived(previewShown: previewShown, previewExpected: previewExpected))
  }

  func cameraUnavailable(_ reason: String) { send(rule.cameraUnavailable(reason)) }

  func stopping() {
    timer?.disarm()
    send(rule.stopping())
  }

  private func send(_ messages: [NotifyMessage]) {
    guard !messages.isEmpty else { return }
    do {
      try socket.send(NotifyMessage.datagram(messages))
    } catch {
      // Once: the supervisor may be gone for good, and the service itself is fine.
      if !sendFailed { log("supervisor: \(error)") }
      sendFailed = true
    }
  }
}

/// No supervisor to tell (no `$NOTIFY_SOCKET`).
final class NoSupervisor: SupervisorDriver {
  func frameArrived(previewShown: Bool, previewExpected: Bool) {}
  func cameraUnavailable(_ reason: String) {}
}
