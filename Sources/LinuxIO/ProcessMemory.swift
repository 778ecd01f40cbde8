import CLinuxIO

/// How the service keeps its resident memory to what it uses, on a board whose RAM it shares with the card's
/// page cache. Measured on the virtual board with a 720p preview, a still and an H.264 movie
/// (docs/performance.md), each of these kept memory that a recording had used long after it:
///
/// - Transparent huge pages, which Debian's kernel gives every anonymous mapping by default ("always"): a
///   malloc arena touched anywhere in a 2 MiB range became 2 MiB resident.
/// - glibc's sliding mmap threshold: after the first frame-sized buffer is freed, glibc raises the threshold
///   above it, so every later frame (1.8 MB at 1280x720 YUYV) comes from an arena, and what the arenas grew
///   to while a movie's encoders ran stays theirs. A fixed threshold keeps such buffers in mappings of their
///   own, returned to the kernel when freed; the board showed no more CPU for it (26.4% and 27.1% for a 720p
///   preview).
/// - One arena per thread that ever allocated (eight per core at most): two are enough for a loop and a few
///   workers, which hold no lock while they draw or encode.
public enum ProcessMemory {
  /// Called first thing in `kioskcam run`, before any thread starts; failures change nothing else, and are
  /// said once.
  public static func keepCompact() {
    if CLinuxIO_disableTransparentHugePages() != 0 { log("transparent huge pages left as they are: \(Errno.current)") }
    // mallopt returns 1 on success.
    if CLinuxIO_mallocArenas(2) != 1 || CLinuxIO_mallocMmapThreshold(256 * 1024) != 1 {
      log("malloc's arenas and mmap threshold left as they are")
    }
  }
}
