import CZlib
import Imaging

/// Reads a console font from the root file system, gunzipping it when it is compressed (Debian ships
/// `/usr/share/consolefonts/*.psf.gz`). The only importer of zlib; the parser itself is pure (`ConsoleFont`).
public enum FontFile {
  /// Where Debian's `console-setup-linux` puts the kiosk's default font; a config key can name another.
  public static let defaultPath = "/usr/share/consolefonts/Lat15-TerminusBold32x16.psf.gz"

  public enum LoadError: Error, Sendable, CustomStringConvertible {
    case unreadable(String)
    case malformed(String, ConsoleFont.ParseError)
    public var description: String {
      switch self {
      case .unreadable(let path): "\(path): cannot be read"
      case .malformed(let path, let error): "\(path): \(error)"
      }
    }
  }

  /// The decompressed bytes of `path`; gzread passes an uncompressed file through unchanged.
  public static func bytes(at path: String) throws(LoadError) -> [UInt8] {
    guard let file = gzopen(path, "rb") else { throw .unreadable(path) }
    defer { gzclose(file) }
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let read = chunk.withUnsafeMutableBytes { gzread(file, $0.baseAddress, UInt32($0.count)) }
      if read < 0 { throw .unreadable(path) }
      if read == 0 { break }
      result.append(contentsOf: chunk[0..<Int(read)])
    }
    return result
  }

  /// Loads and parses a PSF2 font.
  public static func load(_ path: String = defaultPath) throws(LoadError) -> ConsoleFont {
    let data = try bytes(at: path)
    do {
      return try ConsoleFont(psf2: data)
    } catch {
      throw .malformed(path, error)
    }
  }
}
