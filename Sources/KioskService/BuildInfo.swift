import Buttons

/// What `kioskcam --version` says: the release, and what this binary was built for and with, so that a
/// technician can tell a Pi build from a board build (the architecture, the compiler, the GPIO library).
enum BuildInfo {
  static let release = "1.0"

  static var line: String { "kioskcam \(release) (\(architecture), \(compiler), \(GPIOLibrary.version))" }

  static var architecture: String {
    #if arch(arm64)
      "aarch64"
    #elseif arch(x86_64)
      "x86_64"
    #else
      "another architecture"
    #endif
  }

  static var compiler: String {
    #if compiler(>=6.3)
      "Swift 6.3 or later"
    #elseif compiler(>=6.2)
      "Swift 6.2"
    #elseif compiler(>=6.1)
      "Swift 6.1"
    #else
      "Swift 6.0"
    #endif
  }
}
