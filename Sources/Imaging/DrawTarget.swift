/// An XRGB8888 picture being drawn, `stride` bytes a row, in memory someone else owns (a display's buffer,
/// or the bench's stand-in for one). Sendable because a buffer lent to one worker is drawn by that worker only.
public struct DrawTarget: @unchecked Sendable {
  public let pixels: UnsafeMutableRawBufferPointer
  public let width: Int
  public let height: Int
  public let stride: Int

  public init(pixels: UnsafeMutableRawBufferPointer, width: Int, height: Int, stride: Int) {
    precondition(stride >= width * 4 && pixels.count >= stride * height, "a draw target smaller than its geometry")
    self.pixels = pixels
    self.width = width
    self.height = height
    self.stride = stride
  }
}
