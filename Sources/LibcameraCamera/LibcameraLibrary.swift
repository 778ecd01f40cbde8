#if canImport(Glibc)
  import Glibc
#endif
import CLibcameraShim

/// Why libcamera cannot be used here: the shim library is not installed, or it (or the libcamera it links)
/// would not load. The capability gate shows it as the camera's "missing" reason.
public struct LibcameraUnavailable: Error, Sendable, Equatable, CustomStringConvertible {
  public let reason: String
  public init(_ reason: String) { self.reason = reason }
  public var description: String { "libcamera: \(reason)" }
}

/// The libcamera shim, `libkioskcam-libcamera.so`, opened with dlopen at first use (Sources/CLibcameraShim/shim.h).
///
/// Looked for beside the running executable first, then in `/usr/lib/kioskcam`: a build's kioskcam and its
/// shim are made from the same commit (their C API must agree; the shim's ABI number is checked too), so a
/// build run from `.build/debug` or copied to a Pi as a pair uses its own shim even where an image installed
/// another; an installed kioskcam in `/usr/bin` finds the image's copy in `/usr/lib/kioskcam`.
public final class LibcameraLibrary: Sendable {
  public static let fileName = "libkioskcam-libcamera.so"
  public static let installedDirectory = "/usr/lib/kioskcam"

  /// Where the shim was opened from.
  public let path: String
  /// libcamera's version as the loaded library reports it (`v0.4.0`...), not the version built against.
  public let version: String
  let api: kioskcam_lc_api

  /// A shim whose functions were found another way than `load`'s dlopen: the unit tests' scripted one.
  public init(path: String, api: kioskcam_lc_api) {
    self.path = path
    self.api = api
    version = api.kioskcam_lc_version().map { String(cString: $0) } ?? "unknown"
  }

  /// The process's shim, opened once from `searchDirectories()`; libraries stay loaded for the process's life.
  public static let shared: Result<LibcameraLibrary, LibcameraUnavailable> = load(from: searchDirectories())

  /// The running executable's folder, then the installed one.
  public static func searchDirectories() -> [String] {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return [installedDirectory] }
    let executable = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let folder = String(executable[..<(executable.lastIndex(of: "/") ?? executable.startIndex)])
    return folder == installedDirectory ? [folder] : [folder.isEmpty ? "/" : folder, installedDirectory]
  }

  /// Opens the first shim found in `directories`. A shim that is there but does not load is the answer (its
  /// reason, often libcamera itself missing, is the one worth showing), not a reason to look further.
  public static func load(from directories: [String]) -> Result<LibcameraLibrary, LibcameraUnavailable> {
    let candidates = directories.map { (directory: String) -> String in "\(directory)/\(fileName)" }
    guard let path = candidates.first(where: { access($0, F_OK) == 0 }) else {
      return .failure(LibcameraUnavailable("\(fileName) not found (looked in \(directories.joined(separator: ", ")))"))
    }
    // libcamera logs every start at INFO on stderr; the kiosk wants its warnings only, unless told otherwise.
    setenv("LIBCAMERA_LOG_LEVELS", "*:WARN", 0)
    let api = UnsafeMutablePointer<kioskcam_lc_api>.allocate(capacity: 1)
    defer { api.deallocate() }
    if let failure = kioskcam_lc_open(path, api) {
      return .failure(LibcameraUnavailable("\(path): \(String(cString: failure))"))
    }
    return .success(LibcameraLibrary(path: path, api: api.pointee))
  }
}
