/// BT.601 limited-range YCbCr to RGB in fixed point (8 fractional bits), the matrix V4L2 cameras default to.
@inlinable @inline(__always)
func rgb(y: UInt8, cb: UInt8, cr: UInt8) -> UInt32 {
  let c = (Int32(y) - 16) * 298 + 128
  let d = Int32(cb) - 128
  let e = Int32(cr) - 128
  let r = clamp((c + 409 * e) >> 8)
  let g = clamp((c - 100 * d - 208 * e) >> 8)
  let b = clamp((c + 516 * d) >> 8)
  return r << 16 | g << 8 | b
}

@inlinable @inline(__always)
func clamp(_ value: Int32) -> UInt32 { UInt32(truncatingIfNeeded: min(max(value, 0), 255)) }
