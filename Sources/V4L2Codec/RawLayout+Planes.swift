extension RawLayout {
  /// Copies a 4:2:0 picture held as three planes, each with its own stride (an encoder's own picture, as the
  /// recorder fills it for x264), into a buffer of this layout: YU12 plane by plane, NV12 with Cb and Cr
  /// interleaved. Rows below the picture repeat its last row, as `pack` does; the same picture gives the same
  /// buffer either way.
  public func pack(
    luma: UnsafeRawPointer, lumaStride: Int, cb: UnsafeRawPointer, cr: UnsafeRawPointer, chromaStride: Int,
    into buffer: UnsafeMutableRawBufferPointer
  ) -> Bool {
    guard buffer.count >= bufferSize, let base = buffer.baseAddress, [.yu12, .nv12].contains(format) else { return false }
    func eachRow(of plane: Plane, _ write: (UnsafeMutableRawPointer, Int) -> Void) {
      for row in 0..<plane.bufferRows { write(base + plane.offset + row * plane.stride, min(row, plane.rows - 1)) }
    }
    eachRow(of: planes[0]) { $0.copyMemory(from: luma + $1 * lumaStride, byteCount: planes[0].rowBytes) }
    if format == .yu12 {
      eachRow(of: planes[1]) { $0.copyMemory(from: cb + $1 * chromaStride, byteCount: planes[1].rowBytes) }
      eachRow(of: planes[2]) { $0.copyMemory(from: cr + $1 * chromaStride, byteCount: planes[2].rowBytes) }
    } else {
      let pairs = planes[1].rowBytes / 2
      eachRow(of: planes[1]) { target, row in
        let (u, v) = (cb + row * chromaStride, cr + row * chromaStride)
        let out = target.assumingMemoryBound(to: UInt8.self)
        for i in 0..<pairs {
          out[2 * i] = u.load(fromByteOffset: i, as: UInt8.self)
          out[2 * i + 1] = v.load(fromByteOffset: i, as: UInt8.self)
        }
      }
    }
    return true
  }
}
