// kioskcam-m2m: raw pictures through the service's V4L2 memory-to-memory encoder and decoder code, as
// v4l2-ctl pushes them through a driver, so the board's tests and anyone with a codec node can run that code
// on a real kernel driver.
//
//   kioskcam-m2m list
//   kioskcam-m2m encode DEVICE --coded FWHT --raw YU12 --size 320x240 [--rate 30] --in RAW --out CODED
//                [--abandon-after K] [--streams N]
//   kioskcam-m2m decode DEVICE --coded FWHT --raw YU12 --in CODED --out RAW --packets N1,N2,...
//   kioskcam-m2m preview-decode DEVICE --coded FWHT --in CODED --out RAW --packets N1,N2,...
//                (the preview's V4L2 frame decoder, a picture waited for per packet, its planes out as YU12)
//
// Picture i carries the timestamp 5 s + i x 33 333 333 ns; every packet and picture out is printed as a JSON
// line with the timestamp it came back with, so a caller can check that the codec carried them through.
#if canImport(Glibc)
  import Glibc
#endif
import Foundation
import Imaging
import LinuxIO
import Preview
import V4L2Codec

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("kioskcam-m2m: \(message)\n".utf8))
  exit(1)
}

func timestamp(_ index: Int) -> Int64 { 5_000_000_000 + Int64(index) * 33_333_333 }

struct Options {
  var positional: [String] = []
  var named: [String: String] = [:]

  init(_ arguments: ArraySlice<String>) {
    var rest = arguments
    while let argument = rest.popFirst() {
      if argument.hasPrefix("--") {
        guard let value = rest.popFirst() else { fail("\(argument) needs a value") }
        named[String(argument.dropFirst(2))] = value
      } else {
        positional.append(argument)
      }
    }
  }

  func string(_ name: String) -> String {
    guard let value = named[name] else { fail("--\(name) is needed") }
    return value
  }

  func fourcc(_ name: String) -> FourCC {
    guard let code = FourCC(string(name)) else { fail("--\(name) takes four characters") }
    return code
  }

  func int(_ name: String, default value: Int) -> Int {
    guard let text = named[name] else { return value }
    guard let number = Int(text) else { fail("--\(name) takes a number") }
    return number
  }

  /// `--in` cut into the packets `--packets` sizes (N1,N2,...).
  var packets: [[UInt8]] {
    guard let input = FileManager.default.contents(atPath: string("in")) else { fail("cannot read --in") }
    let sizes = string("packets").split(separator: ",").compactMap { Int($0) }
    guard sizes.reduce(0, +) <= input.count else { fail("--packets add up to more than --in holds") }
    var offset = 0
    return sizes.map { size in
      defer { offset += size }
      return Array(input[offset..<(offset + size)])
    }
  }

  var device: String {
    guard let path = positional.first else { fail("name the codec's device node") }
    return path
  }
}

func line(_ fields: KeyValuePairs<String, Any>) {
  let body = fields.map { key, value in
    let text = value is String ? "\"\(value)\"" : "\(value)"
    return "\"\(key)\":\(text)"
  }
  print("{" + body.joined(separator: ",") + "}")
}

func encode(_ options: Options) {
  let size = options.string("size").split(separator: "x").compactMap { Int($0) }
  guard size.count == 2 else { fail("--size takes WIDTHxHEIGHT") }
  let settings = EncoderSettings(
    coded: options.fourcc("coded"), raw: options.fourcc("raw"), width: size[0], height: size[1],
    frameRate: options.int("rate", default: 30))
  guard let input = FileManager.default.contents(atPath: options.string("in")) else { fail("cannot read --in") }
  let abandonAfter = options.int("abandon-after", default: -1)
  let streams = options.int("streams", default: 1)
  let out = options.string("out")
  let pictures = [UInt8](input)

  func run(stream: Int, stopAfter: Int?) throws(CodecDeviceError) -> [UInt8] {
    let encoder = try StatefulEncoder(path: options.device, settings: settings)
    let frameSize = encoder.layout.tightSize
    guard input.count >= frameSize else { fail("--in holds less than one \(size[0])x\(size[1]) picture") }
    let frames = input.count / frameSize
    var packets: [CodedPacket] = []
    for index in 0..<min(frames, stopAfter ?? frames) {
      let start = index * frameSize
      packets += try encoder.encode(timestamp: timestamp(index)) { buffer, layout in
        pictures.withUnsafeBytes { layout.pack(UnsafeRawBufferPointer(rebasing: $0[start..<(start + frameSize)]), into: buffer) }
      }
    }
    // A stream abandoned midway is dropped undrained: the next one must not notice.
    if stopAfter == nil { packets += try encoder.finish() }
    for packet in packets {
      line(["stream": stream, "bytes": packet.bytes.count, "timestamp": packet.timestamp, "keyframe": packet.keyframe])
    }
    line([
      "stream": stream, "driver": encoder.driver, "width": encoder.layout.width, "height": encoder.layout.height,
      "stride": encoder.layout.planes[0].stride, "frames": frames, "forcesKeyframes": encoder.forcesKeyframes,
    ])
    return packets.flatMap(\.bytes)
  }

  do {
    if abandonAfter >= 0 { _ = try run(stream: 0, stopAfter: abandonAfter) }
    for stream in 1...max(1, streams) {
      let bytes = try run(stream: stream, stopAfter: nil)
      let path = stream == 1 ? out : "\(out).\(stream)"
      guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { fail("cannot write \(path)") }
    }
  } catch {
    fail("\(error)")
  }
}

func decode(_ options: Options) {
  let packets = options.packets
  var output = Data()
  do {
    let decoder = try StatefulDecoder(path: options.device, coded: options.fourcc("coded"), raw: options.fourcc("raw"))
    var pictures: [DecodedPicture] = []
    for (index, packet) in packets.enumerated() {
      pictures += try decoder.decode(packet, timestamp: timestamp(index))
    }
    pictures += try decoder.finish()
    for picture in pictures {
      output.append(contentsOf: picture.bytes)
      line(["timestamp": picture.timestamp, "width": picture.layout.width, "height": picture.layout.height])
    }
    line(["driver": decoder.driver, "pictures": pictures.count])
  } catch {
    fail("\(error)")
  }
  guard FileManager.default.createFile(atPath: options.string("out"), contents: output) else { fail("cannot write --out") }
}

/// The preview's own decoder (`V4L2FrameDecoder`), which a Pi runs on MJPEG: one packet in, its picture waited
/// for and read through the plane view the preview's scalers take.
func previewDecode(_ options: Options) {
  let packets = options.packets
  var output = Data()
  do {
    let decoder = try V4L2FrameDecoder(path: options.device, coded: options.fourcc("coded"))
    for packet in packets {
      let start = monotonicNanoseconds()
      let view = try packet.withUnsafeBytes { try decoder.decode($0, covering: 0, 0) }
      let took = monotonicNanoseconds() - start
      for (plane, width, height, stride) in [
        (view.luma, view.width, view.height, view.lumaStride), (view.cb, view.chromaWidth, view.chromaHeight, view.chromaStride),
        (view.cr, view.chromaWidth, view.chromaHeight, view.chromaStride),
      ] {
        for row in 0..<height { output.append(plane + row * stride, count: width) }
      }
      line(["width": view.width, "height": view.height, "microseconds": took / 1000])
    }
  } catch {
    fail("\(error)")
  }
  guard FileManager.default.createFile(atPath: options.string("out"), contents: output) else { fail("cannot write --out") }
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "list":
  for codec in CodecProbe.codecs() { print(codec.summary) }
case "encode": encode(Options(arguments.dropFirst(2)))
case "decode": decode(Options(arguments.dropFirst(2)))
case "preview-decode": previewDecode(Options(arguments.dropFirst(2)))
default: fail("usage: kioskcam-m2m list | encode DEVICE ... | decode DEVICE ... | preview-decode DEVICE ... (see the source's first lines)")
}
