import CAVCodec

/// libavcodec and libavutil, opened the first time a movie's sound is encoded or review decodes H.264
/// (Sources/CAVCodec/shim.h says why they are not linked). Their absence is an error like any codec's.
enum LibAV {
  private static let opened: Result<kioskcam_libav, CodecError> = {
    // Filled by C before Swift reads it: every field is set when the open succeeds, none is read when it fails.
    let api = UnsafeMutablePointer<kioskcam_libav>.allocate(capacity: 1)
    defer { api.deallocate() }
    if let failed = kioskcam_libav_open(api) { return .failure(CodecError("libavcodec: \(String(cString: failed))")) }
    return .success(api.pointee)
  }()

  static func api() throws(CodecError) -> kioskcam_libav { try opened.get() }
}
