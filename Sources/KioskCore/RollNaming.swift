/// A position in the DCF camera roll: folder `100`-`999`, file `0001`-`9999`.
///
/// Items are numbered in one sequence across folders, as cameras do: a full folder moves on to the next.
public struct RollNumber: Comparable, Hashable, Sendable, CustomStringConvertible {
  public static let folders = 100...999
  public static let files = 1...9999

  public var folder: Int
  public var file: Int

  public init?(folder: Int, file: Int) {
    guard Self.folders.contains(folder), Self.files.contains(file) else { return nil }
    self.folder = folder
    self.file = file
  }

  public static let first = RollNumber(folder: 100, file: 1)!

  /// The number after this one, or nil when the roll is exhausted (999/9999).
  public var next: RollNumber? {
    if file < Self.files.upperBound { return RollNumber(folder: folder, file: file + 1) }
    return RollNumber(folder: folder + 1, file: 1)
  }

  public static func < (lhs: RollNumber, rhs: RollNumber) -> Bool { (lhs.folder, lhs.file) < (rhs.folder, rhs.file) }

  public var description: String { "\(folder)-\(pad(file, 4))" }

  /// `100KIOSK` for suffix `KIOSK`.
  public func folderName(suffix: String) -> String { "\(folder)\(suffix)" }

  /// `IMG_0001.JPG` for kind `.still`.
  public func fileName(_ kind: MediaKind) -> String { fileName(extension: kind.fileExtension) }

  /// `IMG_0002.MP4` for `MP4`.
  public func fileName(extension: String) -> String { "IMG_\(pad(file, 4)).\(`extension`)" }

  /// The folder number of a DCF folder name (`100KIOSK`, `101ABCDE`), any suffix.
  public static func folderNumber(of name: String) -> Int? {
    let bytes = Array(name.utf8)
    guard bytes.count == 8, let number = Int(String(decoding: bytes[0..<3], as: UTF8.self)),
      folders.contains(number)
    else { return nil }
    let isDCF = bytes[3...].allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || $0 == 0x5F }
    return isDCF ? number : nil
  }

  /// The file number of a DCF file name (`IMG_0001.JPG`, `IMG_0002.MOV`), any extension.
  public static func fileNumber(of name: String) -> Int? {
    let bytes = Array(name.utf8)
    guard bytes.count == 12, name.hasPrefix("IMG_"), bytes[8] == UInt8(ascii: "."),
      let number = Int(String(decoding: bytes[4..<8], as: UTF8.self)), files.contains(number)
    else { return nil }
    return number
  }
}

/// What a roll item holds.
public enum MediaKind: String, Sendable {
  case still, movie
  public var fileExtension: String { self == .still ? "JPG" : "MOV" }
}

private func pad(_ value: Int, _ width: Int) -> String {
  let digits = String(value)
  return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
