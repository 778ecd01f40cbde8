#if canImport(Glibc)
  import Glibc
#endif
import Foundation
import Testing

@testable import LibcameraCamera

/// The real shim, built beside the test binary (`swift build --build-tests` builds every product), loaded as
/// the service loads it, against the host's libcamera: Debian 12's 0.0.3, with no camera (no kernel module
/// loads on this host, so no vimc either).
// Serialized: libcamera allows one camera manager a process, and three of these tests make one.
@Suite(.serialized) struct LibcameraLibraryTests {
  static let builtShim = LibcameraLibrary.searchDirectories()[0] + "/" + LibcameraLibrary.fileName
  /// The version in the name of the libcamera.so file this process has mapped (libcamera.so.0.0.3), if any.
  static func mappedLibcameraVersion() -> String? {
    // Read a line at a time: /proc files have no size for a whole-file read to go by.
    guard let maps = fopen("/proc/self/maps", "r") else { return nil }
    defer { fclose(maps) }
    var buffer = [CChar](repeating: 0, count: 4096)
    while fgets(&buffer, Int32(buffer.count), maps) != nil {
      let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
      let line = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
      if let name = line.range(of: "/libcamera.so.") { return String(line[name.upperBound...]) }
    }
    return nil
  }

  static var hostHasLibcamera003: Bool { access("/usr/lib/x86_64-linux-gnu/libcamera.so.0.0.3", F_OK) == 0 }

  @Test(.enabled(if: hostHasLibcamera003 && access(builtShim, F_OK) == 0, "needs the shim built and libcamera 0.0.3"))
  func theBuiltShimLoadsAndReportsTheHostsLibcamera() throws {
    let library = try LibcameraLibrary.shared.get()
    #expect(library.path == Self.builtShim)
    // The version libcamera reports is the one of the file the process mapped, by the kernel's map: 0.0.3 on
    // Debian 12, 0.4.0 under make pi-test's qemu-aarch64 with trixie's sysroot.
    let mapped = try #require(Self.mappedLibcameraVersion(), "no libcamera.so in /proc/self/maps")
    #expect(library.version.contains(mapped), "libcamera says \(library.version), the mapped file is \(mapped)")
    let report = LibcameraReport(.success(library))
    #expect(report.problem == nil)
    #expect(report.version == library.version)
    #expect(report.cameras == [])
    #expect(report.text == ["  libcamera \(library.version)", "  no camera"])
  }

  @Test(.enabled(if: hostHasLibcamera003 && access(builtShim, F_OK) == 0, "needs the shim built and libcamera 0.0.3"))
  func aSecondCameraManagerIsRefusedNotAborted() throws {
    let library = try LibcameraLibrary.shared.get()
    let first = try LibcameraManager(library)
    #expect(throws: (any Error).self) { try LibcameraManager(library) }
    withExtendedLifetime(first) {}
  }

  @Test(.enabled(if: hostHasLibcamera003 && access(builtShim, F_OK) == 0, "needs the shim built and libcamera 0.0.3"))
  func openingACameraLibcameraDoesNotHaveIsAbsent() throws {
    let manager = try LibcameraManager(try LibcameraLibrary.shared.get())
    let choice = LibcameraStreamChoice(format: "NV12", fourcc: "NV12", size: .init(width: 640, height: 360))
    do {
      _ = try LibcameraStream(manager, id: "/base/no/such/camera", choice: choice)
      Issue.record("a camera that is not there opened")
    } catch {
      guard case .absent(let reason) = error else { throw error }
      #expect(reason == "libcamera: no camera /base/no/such/camera")
    }
  }

  @Test func aFolderWithoutTheShimGivesTheReason() throws {
    let empty = "/proc/self/fdinfo"
    guard case .failure(let unavailable) = LibcameraLibrary.load(from: [empty, "/nonexistent"]) else {
      Issue.record("a shim was found where there is none")
      return
    }
    #expect(
      unavailable.description
        == "libcamera: libkioskcam-libcamera.so not found (looked in /proc/self/fdinfo, /nonexistent)")
    let report = LibcameraReport(.failure(unavailable))
    #expect(report.version == nil && report.cameras.isEmpty)
    #expect(report.text == ["  unavailable: \(unavailable.description)"])
  }

  @Test func aFileThatIsNotALibraryGivesTheLoadersWords() throws {
    let folder = "/tmp/kioskcam-libcamera-test-\(getpid())"
    mkdir(folder, 0o700)
    defer { unlink(folder + "/" + LibcameraLibrary.fileName); rmdir(folder) }
    let fd = open(folder + "/" + LibcameraLibrary.fileName, O_CREAT | O_WRONLY, 0o600)
    _ = write(fd, "not an ELF file", 15)
    close(fd)
    guard case .failure(let unavailable) = LibcameraLibrary.load(from: [folder]) else {
      Issue.record("a text file loaded as the shim")
      return
    }
    #expect(unavailable.reason.hasPrefix("\(folder)/\(LibcameraLibrary.fileName): "))
    #expect(unavailable.reason.contains("file too short") || unavailable.reason.contains("invalid ELF header"))
  }
}
