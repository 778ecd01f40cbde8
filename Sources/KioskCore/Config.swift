/// A GPIO line as the configuration names it: by offset on its chip, or by the line's name.
public enum LineReference: Hashable, Sendable, CustomStringConvertible {
  case offset(Int)
  case name(String)

  public init(parsing text: String) {
    if let offset = Int(text), offset >= 0 { self = .offset(offset) } else { self = .name(text) }
  }
  public var description: String {
    switch self {
    case .offset(let offset): "line \(offset)"
    case .name(let name): "line '\(name)'"
    }
  }
}

/// The pull resistor requested on an input line.
public enum Bias: String, Sendable, CaseIterable {
  case asIs = "as-is", disabled, pullUp = "pull-up", pullDown = "pull-down"
}

/// Which camera stack `[camera] backend` takes cameras from.
public enum CameraBackend: String, Sendable, CaseIterable {
  /// V4L2 capture devices through libv4l2: USB webcams, the virtual board's cameras. The default.
  case v4l2
  /// libcamera's cameras (a Raspberry Pi's Camera Modules on CSI) through the libkioskcam-libcamera.so shim.
  case libcamera
  /// A V4L2 device that qualifies, else a libcamera camera: webcams stay on V4L2.
  case auto
}

/// The validated configuration of `/etc/kioskcam/kioskcam.conf`; every default here is the documented one.
public struct Config: Sendable, Equatable {
  public struct Camera: Sendable, Equatable {
    /// V4L2 by default, so a configuration written before libcamera existed here behaves as it did.
    public var backend = CameraBackend.v4l2
    /// `auto` (the first capture device that streams), a device path, or (backend libcamera or auto) a libcamera
    /// camera id: the camera used at start.
    public var device = "auto"
    /// Every camera the `camera` button cycles through, in order, when the configuration names more than
    /// one (`device = /dev/video0, /dev/video2`); empty with a single camera.
    public var cycle: [String] = []
    public var format = PixelFormat.yuyv
    public var size = Size(width: 640, height: 360)
    public var frameRate = 30
    /// How the camera is mounted, in degrees clockwise (0, 90, 180, 270): written as EXIF Orientation so
    /// viewers turn the picture upright; the pixels are stored as the sensor reads them.
    public var rotation = 0

    /// A camera named in `[camera] device`: a V4L2 path, or a libcamera camera id, which is a device-tree path
    /// (`/base/soc/i2c0mux/i2c@1/imx219@10`) or, for a webcam on a PC, an ACPI one (`\_SB_.PCI0-1:1.0-1d6b:0102`).
    static func isDeviceName(_ name: String) -> Bool {
      name.hasPrefix("/") || name.hasPrefix("\\")
    }
  }
  public struct Display: Sendable, Equatable {
    /// `auto` (the first card with a connected connector), `none` (headless), or a card path.
    public var device = "auto"
    /// How long the reasons stay on screen before the service exits for a missing required capability.
    public var missingMessage = Duration.seconds(10)
    /// Degrees clockwise the preview is turned on the panel (0, 90, 180, 270): for a display mounted in
    /// portrait or upside down. The saved files are not turned (see `[camera] rotation` for those).
    public var rotation = 0
    /// Mirror the preview left to right, as photo booths do; the saved files are never mirrored.
    public var mirror = false
    /// The PSF2 console font the overlay's words are drawn in (gzipped or not), read at start.
    public var font = "/usr/share/consolefonts/Lat15-TerminusBold32x16.psf.gz"
    /// Threads that decode and draw the preview off the loop; nil: `previewWorkers(cores:)`.
    public var previewWorkers: Int? = nil

    /// All the cores but the loop's when there are more than two; on one or two cores, one worker a core
    /// (the loop's own share of a frame is a small fraction of a decode, `make bench`).
    public func previewWorkers(cores: Int) -> Int { previewWorkers ?? (cores > 2 ? cores - 1 : max(1, cores)) }
  }
  public struct Buttons: Sendable, Equatable {
    /// `auto` (the first chip that has the configured lines), a chip name, path or label.
    public var chip = "auto"
    /// A Raspberry Pi's header pin 11 by the name its GPIO chip gives the line (every Pi's device tree does).
    public var shutter: LineReference? = .name("GPIO17")
    public var mode: LineReference? = nil
    public var cancel: LineReference? = nil
    public var camera: LineReference? = nil
    public var zoomIn: LineReference? = nil
    public var zoomOut: LineReference? = nil
    public var activeLow = true
    public var bias = Bias.pullUp
    public var debounce = Duration.milliseconds(30)
    public var minimumPulse = Duration.milliseconds(5)
    public var longPress = Duration.milliseconds(800)

    /// Every configured role with its line, in role order.
    public var lines: [(ButtonRole, LineReference)] {
      let all: [(ButtonRole, LineReference?)] = [
        (.shutter, shutter), (.mode, mode), (.cancel, cancel), (.camera, camera), (.zoomIn, zoomIn),
        (.zoomOut, zoomOut),
      ]
      return all.compactMap { role, line in line.map { (role, $0) } }
    }

    public var timing: GestureTiming {
      GestureTiming(debounce: debounce, minimumPulse: minimumPulse, hold: longPress)
    }
  }
  public struct Outputs: Sendable, Equatable {
    /// Lamps on the buttons' chip, by offset or name; none = not fitted.
    public var tally: LineReference? = nil
    public var ready: LineReference? = nil
    public var flash: LineReference? = nil
    /// How long the flash lamp is lit before the frame that becomes the still: the exposure must happen in
    /// its light, so a flash still is the first frame taken this long after the press, not the nearest one.
    public var flashLead = Duration.milliseconds(100)
    /// The flash lamp stays lit while a movie records, as a video light.
    public var flashForMovies = false
    /// Lamps wired to light when the line is low.
    public var activeLow = false

    public var lines: [(Output, LineReference)] {
      [(Output.tally, tally), (.ready, ready), (.flash, flash)].compactMap { output, line in line.map { (output, $0) } }
    }
  }
  public struct Capture: Sendable, Equatable {
    public var jpegQuality = 90
    /// Seconds counted down on screen before a still; 0 = at the press.
    public var countdown = Duration.zero
    /// Seconds the photo just taken stays on screen for its check, "use photo / retake" (`review-s`); 0 = none.
    public var photoCheck = Duration.zero
    /// Digital zoom, in hundredths of the factor (400 = 4.0x): the most the zoom buttons go to, and each step.
    public var zoomMaximum = 400
    public var zoomStep = 50
  }
  public struct Movie: Sendable, Equatable {
    /// A recording stops by itself after this long.
    public var maximumDuration = Duration.seconds(600)
    /// What the camera must stream for `movie-camera` to pass.
    public var size = Size(width: 640, height: 360)
    public var frameRate = 25
    /// Frame size and JPEG quality or H.264 bit rate of what is recorded (`videoQuality`).
    public var quality = MovieQuality.high
    /// H.264 in MP4 or Motion-JPEG in QuickTime.
    public var codec = MovieCodecChoice.auto
    /// Sound in H.264 movies: the first ALSA capture device, none, or one by its PCM name.
    public var audio = MovieAudio.auto
  }
  public struct Review: Sendable, Equatable {
    /// Review mode with no press (and no movie playing) for this long returns to the live picture.
    public var idle = Duration.seconds(60)
    /// Whether a long press on cancel, confirmed with shutter, deletes the item on screen.
    public var allowDelete = false
  }
  public struct Roll: Sendable, Equatable {
    public var path = "/var/lib/kioskcam/roll"
    /// The five characters after the folder number: `100KIOSK`.
    public var folderSuffix = "KIOSK"
    /// Free space, in MiB, the roll's file system must keep: below it at start `camera-roll` fails, and
    /// while running the shutter is refused ("Storage full") before the disk fills.
    public var reserveMegabytes = 64
    public var reserveBytes: UInt64 { UInt64(reserveMegabytes) * 1_048_576 }
    /// `any` so that a system on one card (Raspberry Pi OS as installed) keeps its roll on the root; an image
    /// with a roll partition of its own names it (the SD-card image: `label:KIOSKROLL`).
    public var mount = RollMount.any
  }
  public struct Capabilities: Sendable, Equatable {
    public static let defaultRequired: [Capability] = [.stillCamera, .shutterButton, .cameraRoll]
    public var required = defaultRequired
    /// By default every capability that is not required.
    public var optional = Capability.allCases.filter { !defaultRequired.contains($0) }
  }

  public struct Control: Sendable, Equatable {
    /// Where `kioskcam shutter`, `mode` and `status` find the running service.
    public var socket = "/run/kioskcam/control.sock"
    /// The group allowed to use it (mode 0660); empty = the service's own group.
    public var group = ""
  }

  public var camera = Camera()
  public var display = Display()
  public var buttons = Buttons()
  public var outputs = Outputs()
  public var capture = Capture()
  public var movie = Movie()
  public var review = Review()
  public var roll = Roll()
  public var control = Control()
  public var capabilities = Capabilities()

  public init() {}
}

extension Config {
  public static let defaultPath = "/etc/kioskcam/kioskcam.conf"
}
