import CameraRoll
import KioskCore
import LinuxIO

/// What a crash or a power cut left on a roll, put right: the service does it at start, before anything new is
/// numbered, and `kioskcam roll recover` does exactly the same to a roll folder with no camera, display or
/// buttons (a card whose appliance died, in a reader). Opening the roll (`CameraRoll.init`) removes half-written
/// stills and closes a torn record; this then finishes and publishes each interrupted recording from its
/// complete fragments, with its record, or removes one that has none.
public enum RollRecovery {
  /// The recovered movies, and what could not be recovered (each also logged, as the service logs them).
  public static func run(_ roll: CameraRoll) -> [Result<MovieSummary, RollError>] {
    for name in roll.completedAtOpen { log("\(name): its rename, cut short, finished from its whole hidden copy") }
    return recordings(roll)
  }

  /// The interrupted recordings alone, published or removed, each logged: also what the service does when the
  /// roll's storage comes back (`CameraRoll.storageReturned` has swept it by then). `failed` hears every error
  /// the card gave, the records' included, with the write it failed.
  public static func recordings(
    _ roll: CameraRoll, failed: (RollError, RollWrite) -> Void = { _, _ in }
  ) -> [Result<MovieSummary, RollError>] {
    let results = MovieRecorder.recoverInterrupted(roll)
    for result in results {
      switch result {
      case .success:
        if let error = MovieSummary.report(result) { failed(error, .record) }
      case .failure(let error):
        log("interrupted recording not recovered: \(error)")
        failed(error, .recovery)
      }
    }
    return results
  }
}
