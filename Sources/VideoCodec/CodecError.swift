import CAVCodec

/// What a codec library said, in its words.
public struct CodecError: Error, Sendable, CustomStringConvertible {
  public let description: String

  /// A libavcodec call's status, in libavutil's words (the libraries are open: the status came from them).
  init(_ call: String, _ status: Int32) {
    var text = [CChar](repeating: 0, count: 128)
    _ = try? LibAV.api().av_strerror(status, &text, text.count)
    let message = text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    description = "\(call): \(String(decoding: message, as: UTF8.self))"
  }

  public init(_ description: String) { self.description = description }
}
