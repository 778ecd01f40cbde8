// swift-tools-version: 6.0
// kioskcam: the userland of a kiosk camera appliance.
// The module graph is the architecture: C modules at the bottom, a pure core, adapters that are the only
// importers of C, and a service that wires them around one event loop.
import Foundation
import PackageDescription

/// Whether pkg-config finds libgpiod 2.x (Debian 13, Raspberry Pi OS trixie) rather than 1.6 (Debian 12): the
/// two are different APIs, and Buttons compiles the one found (the Pi build points PKG_CONFIG_* at its sysroot).
let libgpiod2: Bool = {
  let pkgConfig = Process()
  pkgConfig.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  pkgConfig.arguments = ["pkg-config", "--modversion", "libgpiod"]
  let output = Pipe()
  pkgConfig.standardOutput = output
  pkgConfig.standardError = FileHandle.nullDevice
  guard (try? pkgConfig.run()) != nil else { return false }
  let version = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  pkgConfig.waitUntilExit()
  return pkgConfig.terminationStatus == 0 && !version.hasPrefix("0.") && !version.hasPrefix("1.")
}()

let package = Package(
  name: "kioskcam",
  products: [
    .executable(name: "kioskcam", targets: ["kioskcam"]),
    // The libcamera backend's C++ shim, opened by the service at first use (Sources/CLibcameraShim/shim.h):
    // libkioskcam-libcamera.so, beside kioskcam.
    .library(name: "kioskcam-libcamera", type: .dynamic, targets: ["LibcameraShim"]),
  ],
  targets: [
    // libv4l2, libgpiod, TurboJPEG and libdrm, found through pkg-config, each with a header-only shim.
    .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2", providers: [.apt(["libv4l-dev"])]),
    .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
    .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
    .systemLibrary(name: "CDRM", pkgConfig: "libdrm", providers: [.apt(["libdrm-dev"])]),
    // zlib, only to gunzip the console font the overlay draws with.
    .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
    // libyuv: the preview's conversion, scaling and rotation (Debian ships no .pc for it).
    .systemLibrary(name: "CYUV", providers: [.apt(["libyuv-dev"])]),
    // libavcodec (FFmpeg): a movie's AAC sound, and H.264 decoded in review. Headers only: it is opened at first
    // use (Sources/CAVCodec/shim.h), so pkg-config's libraries stay off the link line.
    .systemLibrary(name: "CAVCodec", providers: [.apt(["libavcodec-dev", "libavutil-dev"])]),
    // libx264, through its own API: H.264 movies. No pkg-config: x264.pc's Cflags carry -DX264_API_IMPORTS (for
    // Windows), a flag SwiftPM refuses with a warning on every build; the headers are on the default paths.
    .systemLibrary(name: "CX264", providers: [.apt(["libx264-dev"])]),
    // libasound (alsa-lib): a movie's sound from an ALSA capture device.
    .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
    // libcamera (C++): the Pi's CSI cameras. Only the shim links it, in a library of its own, so that kioskcam
    // itself runs where libcamera is not installed.
    .systemLibrary(name: "CLibcamera", pkgConfig: "libcamera", providers: [.apt(["libcamera-dev"])]),
    // -fPIC: it goes into a shared library, and SwiftPM 6.0.3 does not say so when it cross-compiles C++ for aarch64
    // (lld then refuses the objects' absolute relocations).
    // swiftc links the library, and would give it Swift's startup object, which calls into libswiftCore:
    // -nostartfiles leaves it out, so nothing in the shim uses Swift. (swiftc still names libswiftCore.so as
    // NEEDED; board/pi/build.sh removes that for the Pi, where the static kioskcam has no libswiftlang.)
    .target(
      name: "LibcameraShim", dependencies: ["CLibcamera"], cxxSettings: [.unsafeFlags(["-fPIC"])],
      linkerSettings: [.unsafeFlags(["-nostartfiles"])]),
    // The shim's C API as a table of function pointers filled by dlopen/dlsym: no link to the shim or libcamera.
    .systemLibrary(name: "CLibcameraShim"),

    // Pure: the state machine, configuration, roll naming. No C, no Foundation.
    .target(name: "KioskCore"),
    // Pure pixels: conversion and scaling between camera and display formats.
    .target(name: "Imaging"),
    // Pure file formats: the EXIF writer and JPEG marker surgery (bytes in, bytes out; no clock, no C).
    .target(name: "MediaFiles"),
    // Errno, owned descriptors and mappings, the epoll loop; CLinuxIO brings the Linux-only headers.
    .systemLibrary(name: "CLinuxIO"),
    .target(name: "LinuxIO", dependencies: ["CLinuxIO"]),

    // Adapters: the only importers of the C modules.
    .target(name: "Camera", dependencies: ["CV4L2", "LinuxIO", "KioskCore", "Imaging"]),
    // libcamera's cameras through the shim: its loader, probe and streams, with the V4L2 camera's errors.
    .target(name: "LibcameraCamera", dependencies: ["CLibcameraShim", "LinuxIO", "KioskCore", "Camera", "Imaging"]),
    .target(
      name: "Buttons", dependencies: ["CGPIOD", "LinuxIO", "KioskCore"],
      swiftSettings: libgpiod2 ? [.define("KIOSKCAM_GPIOD2")] : []),
    .target(name: "Display", dependencies: ["CDRM", "LinuxIO", "Imaging"]),
    .target(name: "JPEGCodec", dependencies: ["CTurboJPEG", "Imaging", "LinuxIO"]),
    .target(name: "CameraRoll", dependencies: ["LinuxIO", "KioskCore"]),
    .target(name: "FontFile", dependencies: ["CZlib", "Imaging"]),
    .target(name: "Scaling", dependencies: ["CYUV", "Imaging"]),
    .target(name: "VideoCodec", dependencies: ["CAVCodec", "CX264", "Imaging"]),
    // The kernel's memory-to-memory stateful encoder and decoder (a Pi's bcm2835-codec; vicodec on the board).
    .target(name: "V4L2Codec", dependencies: ["CV4L2", "LinuxIO"]),
    // The microphone: ALSA capture on a thread of its own, stamped on CLOCK_MONOTONIC like the camera's frames.
    .target(name: "Sound", dependencies: ["CALSA", "LinuxIO"]),

    // Capture: frames to stills and movies on the roll, frame checks, the roll read back for review.
    // Workers' code, no loop and no device: the service, the tests and the bench share it.
    .target(
      name: "Capture",
      dependencies: [
        "KioskCore", "Imaging", "MediaFiles", "LinuxIO", "JPEGCodec", "CameraRoll", "Scaling", "VideoCodec", "V4L2Codec",
      ]),
    // The preview drawn off the loop: frames handed to workers (newest wins), decoded and drawn in parallel.
    .target(name: "Preview", dependencies: ["KioskCore", "Imaging", "JPEGCodec", "Scaling", "LinuxIO", "V4L2Codec"]),
    // Wiring: the loop, the dispatcher's queue, and one driver per concern carrying out what the core decides.
    .target(
      name: "KioskService",
      dependencies: [
        "KioskCore", "Imaging", "MediaFiles", "LinuxIO", "Camera", "Buttons", "Display", "JPEGCodec", "CameraRoll",
        "FontFile", "Scaling", "Capture", "Preview", "VideoCodec", "V4L2Codec", "Sound", "LibcameraCamera",
      ]
    ),
    .executableTarget(name: "kioskcam", dependencies: ["KioskService"]),
    // Raw pictures through V4L2Codec on a real codec node, as v4l2-ctl does: the board's codec tests run it.
    .executableTarget(name: "kioskcam-m2m", dependencies: ["V4L2Codec", "Preview", "Imaging", "LinuxIO"]),
    // `make bench`: each stage of a still, and movie recording, beside cjpeg and ffmpeg in the same run.
    .executableTarget(
      name: "kioskcam-bench", dependencies: [
        "Capture", "KioskCore", "Imaging", "JPEGCodec", "MediaFiles", "LinuxIO", "CameraRoll", "CYUV", "Scaling",
        "Preview", "VideoCodec",
      ]),

    // libcamera as a test scripts it, behind the shim's C function table: cameras listed, frames completed, unplugs.
    .target(name: "LibcameraFakes", dependencies: ["LibcameraCamera", "CLibcameraShim", "KioskCore", "LinuxIO"], path: "Tests/LibcameraFakes"),
    // Runs the tools nobody here wrote (jpeginfo, exiftool, ffprobe, ffmpeg) for the tests that judge files by them.
    .target(name: "TestPeers", path: "Tests/TestPeers"),
    .testTarget(name: "KioskCoreTests", dependencies: ["KioskCore"]),
    .testTarget(name: "ImagingTests", dependencies: ["Imaging", "JPEGCodec", "FontFile"]),
    // libyuv's preview held to the pure reference scaler (and MJPEG planes to a TurboJPEG RGB decode), pixel by pixel.
    .testTarget(name: "ScalingTests", dependencies: ["Scaling", "Imaging", "JPEGCodec"]),
    // Byte layout by our own reader, and every file also by exiftool, jpeginfo and djpeg.
    .testTarget(
      name: "MediaFilesTests",
      dependencies: [
        "MediaFiles", "Imaging", "JPEGCodec", "Capture", "Camera", "KioskCore", "CameraRoll", "LinuxIO", "VideoCodec",
        "TestPeers",
      ]),
    // The service's wiring with fake drivers: events in, actions to drivers, posted events handled in order; drivers
    // over scripted lines, streams and frames (the button panel, the camera session, the still writer, the movie sink)
    // and the control socket on a real Unix socket.
    .testTarget(
      name: "KioskServiceTests",
      dependencies: [
        "KioskService", "KioskCore", "Capture", "CameraRoll", "Imaging", "Preview", "Buttons", "Camera", "LinuxIO",
        "TestPeers", "LibcameraCamera", "LibcameraFakes",
      ]),
    // The preview's hand-over and workers: newest wins, never out of order, never a wait on the loop.
    .testTarget(name: "PreviewTests", dependencies: ["Preview", "Imaging", "JPEGCodec", "KioskCore", "Scaling", "V4L2Codec"]),
    // Where raw pictures sit in a codec's buffers (the board's vicodec test drives the rest).
    .testTarget(name: "V4L2CodecTests", dependencies: ["V4L2Codec", "LinuxIO"]),
    // libcamera's adapter: format choice and plane maps, and the capture stream over the fake shim; the real shim on
    // the host's libcamera 0.0.3.
    .testTarget(
      name: "LibcameraCameraTests", dependencies: ["LibcameraCamera", "KioskCore", "Camera", "LibcameraFakes"]),
    .testTarget(name: "CameraRollTests", dependencies: ["CameraRoll", "KioskCore", "LinuxIO"]),
    // The sd_notify sender against a datagram socket of the test's own, as systemd's would be.
    .testTarget(name: "LinuxIOTests", dependencies: ["LinuxIO", "KioskCore"]),
    // The appliance's files checked by the tools that read them: systemd-analyze verify, shellcheck, sshd -t/-T.
    .testTarget(name: "RootfsTests"),
    // Drives the virtual board from the host, as a user would; skipped when no board is up. Unoptimised in a
    // release build too: trixie's Swift 6.0.3 crashes optimising it (CopyPropagation's ownership verifier, on the
    // sound test's closure) when make pi-test builds the tests in release for aarch64, where they do not run.
    .testTarget(
      name: "DeviceTests", dependencies: ["Imaging", "JPEGCodec", "FontFile"],
      swiftSettings: [.unsafeFlags(["-Onone"], .when(configuration: .release))]),
  ],
  swiftLanguageModes: [.v6],
  // The shim's C++: libcamera 0.0.3 (Debian 12) and 0.4.0 (trixie) both build with C++17.
  cxxLanguageStandard: .cxx17
)
