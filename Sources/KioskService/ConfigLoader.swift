#if canImport(Glibc)
  import Glibc
#endif
import KioskCore
import LinuxIO

public enum ConfigLoader {
  /// Reads and validates the file at `path`; a missing or unreadable file is a configuration error too.
  public static func load(_ path: String) throws(ServiceError) -> Config {
    let bytes: [UInt8]
    do {
      let file = try OwnedFD(opening: path, flags: O_RDONLY)
      bytes = try file.readToEnd(limit: 1 << 20)
    } catch {
      throw .configuration(ConfigProblems(problems: [ConfigProblem(file: path, line: 0, message: "cannot read: \(error.errno)")]))
    }
    switch Config.parse(bytes, file: path) {
    case .success(let config): return config
    case .failure(let problems): throw .configuration(problems)
    }
  }
}
