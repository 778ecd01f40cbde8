import CameraRoll
import Capture
import FoundationEssentials
import KioskCore
import LinuxIO

/// `kioskcam roll list` and `kioskcam roll recover`: the roll from the command line, with no service.
extension Commands {
  static func roll(_ options: inout Options) throws(ServiceError) {
    switch options.subcommand() {
    case "list": try list(&options)
    case "recover": try recover(&options)
    default: throw .usage("roll needs a subcommand: list or recover")
    }
  }

  private static func list(_ options: inout Options) throws(ServiceError) {
    let json = options.flag("--json")
    let path = try options.value("--config") ?? Config.defaultPath
    try options.finish()
    let root = try ConfigLoader.load(path).roll.path
    guard FileStatus.isDirectory(root) else { throw .io("camera roll \(root): no such directory") }
    let items = CameraRoll.list(root: root)
    if json {
      guard let text = JSONOutput.text(items) else { throw .io("cannot encode the roll listing") }
      print(text)
    } else {
      for item in items { print(item.text) }
    }
  }

  /// The service's start-up recovery on a roll folder (`--path`, else the configuration's `[roll] path`),
  /// one line for each thing it did. Refused while a service answers on the configuration's control socket:
  /// two writers on one roll could give one number twice, and the service recovers its roll at start anyway.
  private static func recover(_ options: inout Options) throws(ServiceError) {
    let given = try options.value("--path")
    let configPath = try options.value("--config")
    try options.finish()
    // A card in a reader on another machine has no configuration beside it: the defaults (folder suffix) do.
    let config =
      if let configPath { try ConfigLoader.load(configPath) } else if given == nil {
        try ConfigLoader.load(Config.defaultPath)
      } else {
        (try? ConfigLoader.load(Config.defaultPath)) ?? Config()
      }
    let root = given ?? config.roll.path
    if (try? connectUnix(config.control.socket)) != nil {
      throw .unavailable([
        "kioskcam is running (it answers on \(config.control.socket)): stop it first; it recovers its roll at start"
      ])
    }
    let roll: CameraRoll
    do {
      roll = try CameraRoll(root: root, suffix: config.roll.folderSuffix)
    } catch {
      throw .io("\(error)")
    }
    for name in roll.sweptAtOpen { print("removed \(name): half-written when the service or the power stopped") }
    for name in roll.completedAtOpen { print("finished \(name): its rename was cut short; its whole hidden copy took the name") }
    var failed: [String] = []
    let results = RollRecovery.run(roll)
    for result in results {
      switch result {
      case .success(let movie):
        print("recovered \(movie.item.relativePath): \(movie.frames) frames, \(movie.roundedSeconds) s")
      case .failure(.nothingToRecover(let name)):
        print("removed \(name): no complete fragment, nothing to play")
      case .failure(let error):
        print("not recovered: \(error)")
        failed.append("\(error)")
      }
    }
    if roll.sweptAtOpen.isEmpty && roll.completedAtOpen.isEmpty && results.isEmpty { print("\(root): nothing to recover") }
    guard failed.isEmpty else { throw .io("\(root): \(failed.count) interrupted recording(s) not recovered") }
  }
}

extension ListedItem {
  /// One line for people: file, size, and what the record says.
  var text: String {
    guard let record else { return "\(file)  \(bytes) bytes  (no record)" }
    let lag = (record.shutterLagMilliseconds * 10).rounded() / 10
    return "\(file)  \(record.mediaType) \(record.width)x\(record.height) \(record.sourceFormat)  \(bytes) bytes  "
      + "captured \(record.captured)  shutter lag \(lag) ms" + (record.crop.map { "  crop \($0)" } ?? "")
  }
}
