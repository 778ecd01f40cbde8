import Foundation
import Testing

/// One service through 150 stills and 5 H.264 movies (issue 39): its memory and its descriptors after the
/// soak are what they were once it had taken its first still and movie, read from /proc in the guest; the
/// files are counted on the roll and the last of each kind judged by jpeginfo and ffprobe. About 70 s on the
/// board.
extension BoardDeviceTests {
  @Test func aSoakOf150StillsAnd5MoviesEndsWithMemoryAndDescriptorsFlat() throws {
    let (config, roll) = try movieConfig("soak", codec: "h264", frameRate: 30)
    try Board.withService("soak", config: config) {
      let pid = Board.servicePID(config: config)
      // Descriptors are the fewest of three reads 0.3 s apart: the service's threads open and close files while
      // it runs (/proc for its CPU use, the roll's folders and records), so one read can catch one of those open
      // (a whole make test read 30 after round 4 and 31 a moment later). One left open is in every read.
      func resident() throws -> (kilobytes: Int, descriptors: Int) {
        let read = try Board.run(
          "grep VmRSS /proc/\(pid)/status; for i in 1 2 3; do ls /proc/\(pid)/fd | wc -l; sleep 0.3; done")
        let numbers = read.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        try #require(numbers.count == 4, "\(read.stdout) \(read.stderr)")
        return (numbers[0], numbers[1...].min()!)
      }
      var stills = 0, movies = 0
      func still() throws {
        stills += 1
        let file = String(format: "DCIM/100KIOSK/IMG_%04d.JPG", stills + movies)
        let shutter = try Board.control("shutter")
        try #require(shutter.status == 0, "\(shutter.stdout) \(shutter.stderr)")
        try Board.waitOnShare(file) { try Board.logs("soak").contains("still \(file) ") }
      }
      func movie() throws {
        movies += 1
        let file = String(format: "DCIM/100KIOSK/IMG_%04d.MP4", stills + movies)
        try #require(try Board.control("mode movie").status == 0)
        try #require(try Board.control("shutter").status == 0)
        Thread.sleep(forTimeInterval: 2)
        try #require(try Board.control("shutter").status == 0)
        try Board.waitOnShare(file) { try Board.logs("soak").contains("movie \(file) saved") }
        try #require(try Board.control("mode still").status == 0)
      }

      // Steady state first: the encoders made, the arenas grown, the first files written.
      for _ in 0..<10 { try still() }
      try movie()
      let before = try resident()
      for round in 0..<4 {
        for _ in 0..<35 { try still() }
        try movie()
        print("soak round \(round + 1): \(stills) stills, \(movies) movies, \(try resident())")
      }
      let after = try resident()
      let growth = Double(after.kilobytes - before.kilobytes) / 1024
      print(String(
        format: "soak: resident %.1f MiB after the first still and movie, %.1f MiB after %d stills and %d movies "
          + "(%+.1f MiB); descriptors %d and %d", Double(before.kilobytes) / 1024, Double(after.kilobytes) / 1024,
        stills, movies, growth, before.descriptors, after.descriptors))
      #expect(after.descriptors == before.descriptors, "no descriptor left open")
      // Flat: within a twentieth of where it stood, or 1.5 MiB (the ring, the arenas and the page tables move
      // a little: the same binary ended +0.5, +0.8 and +1.3 MiB from a start of 21 MiB, where a twentieth is
      // 1.05). The leak this watches for grew 30 to 40 MiB (9ce7508).
      let allowed = max(Double(before.kilobytes) * 0.05, 1536)
      #expect(Double(after.kilobytes - before.kilobytes) <= allowed, "grew \(growth) MiB")

      let files = try FileManager.default.contentsOfDirectory(atPath: "\(roll)/DCIM/100KIOSK")
      #expect(files.filter { $0.hasSuffix(".JPG") }.count == 150 && files.filter { $0.hasSuffix(".MP4") }.count == 5)
      let lastStill = try Board.host(["/usr/bin/jpeginfo", "-c", "\(roll)/DCIM/100KIOSK/IMG_0154.JPG"])
      #expect(lastStill.status == 0 && lastStill.stdout.contains("OK"), "\(lastStill.stdout)")
      let lastMovie = try Board.host([
        "/usr/bin/ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name", "-of", "csv=p=0",
        "\(roll)/DCIM/100KIOSK/IMG_0155.MP4",
      ])
      #expect(lastMovie.stdout == "h264\n", "\(lastMovie.stdout) \(lastMovie.stderr)")
    }
  }
}
