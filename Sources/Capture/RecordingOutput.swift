import CameraRoll
import LinuxIO

/// The hidden file a recording grows in, as the movie writer uses it. A protocol so that a test can hold a
/// write or an fsync for as long as a stalling SD card would, and show that the loop is not held with it.
public protocol RecordingOutput: Sendable {
  func append(_ bytes: [UInt8]) throws(SystemCallError)
  func write(_ bytes: [UInt8], at offset: UInt64) throws(SystemCallError)
  func sync() throws(SystemCallError)
  func truncate(to length: UInt64) throws(SystemCallError)
  func size() throws(SystemCallError) -> UInt64
}

extension RecordingFile: RecordingOutput {
  public func append(_ bytes: [UInt8]) throws(SystemCallError) { try file.writeAll(bytes) }
  public func write(_ bytes: [UInt8], at offset: UInt64) throws(SystemCallError) { try file.writeAll(bytes, at: offset) }
  public func sync() throws(SystemCallError) { try file.sync() }
  public func truncate(to length: UInt64) throws(SystemCallError) { try file.truncate(to: length) }
  public func size() throws(SystemCallError) -> UInt64 { try file.size() }
}
