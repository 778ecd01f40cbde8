/// One published item of the roll as review mode sees it: where it is and what it holds.
public struct RollEntry: Sendable, Hashable {
  /// Relative to the roll root: `DCIM/100KIOSK/IMG_0012.JPG`.
  public let path: String
  public let number: RollNumber
  public let kind: MediaKind

  public init(path: String, number: RollNumber, kind: MediaKind) {
    self.path = path
    self.number = number
    self.kind = kind
  }

  /// From a DCF path inside the roll; nil for anything that is not a still or a movie of ours.
  public init?(path: String) {
    let parts = path.split(separator: "/").map(String.init)
    guard parts.count == 3, parts[0] == "DCIM", let folder = RollNumber.folderNumber(of: parts[1]),
      let file = RollNumber.fileNumber(of: parts[2]), let number = RollNumber(folder: folder, file: file)
    else { return nil }
    switch parts[2].suffix(3).uppercased() {
    case "JPG": kind = .still
    case "MOV", "MP4": kind = .movie
    default: return nil
    }
    self.path = path
    self.number = number
  }
}

/// The roll in review mode, newest first, and which item is on screen.
///
/// The list comes from the disk whenever it may have changed (a capture, a delete, a start); the selection
/// follows the item, not the position, so a photo taken over the control socket while someone reviews does
/// not move the picture under them: only its position ("13 / 241") changes.
public struct RollReview: Sendable, Equatable {
  public private(set) var items: [RollEntry] = []
  public private(set) var index = 0

  public init(_ entries: [RollEntry] = []) { update(entries) }

  public var isEmpty: Bool { items.isEmpty }
  public var current: RollEntry? { items.indices.contains(index) ? items[index] : nil }
  /// 1 is the newest.
  public var position: Int { index + 1 }

  /// The roll as listed now, in any order. The selected item stays selected; if it went away (deleted over
  /// SSH), the next older one takes its place, or the oldest.
  public mutating func update(_ entries: [RollEntry]) {
    let selected = current
    items = Array(Set(entries)).sorted { ($0.number, $0.path) > ($1.number, $1.path) }
    guard let selected else {
      index = 0
      return
    }
    if let same = items.firstIndex(of: selected) {
      index = same
    } else {
      index = items.firstIndex { $0.number < selected.number } ?? max(0, items.count - 1)
    }
  }

  /// Shutter: the next older item; past the oldest, round to the newest, so one button reaches everything.
  public mutating func older() {
    guard !items.isEmpty else { return }
    index = (index + 1) % items.count
  }

  /// Long press: the next newer item; before the newest, round to the oldest.
  public mutating func newer() {
    guard !items.isEmpty else { return }
    index = (index + items.count - 1) % items.count
  }

  public mutating func selectNewest() { index = 0 }

  /// Takes `path` out of the list at once (the service deletes the file and lists again).
  public mutating func remove(_ path: String) {
    update(items.filter { $0.path != path })
  }
}

/// What review mode shows: the item, where it is in the roll, and what is going on with it.
public struct ReviewView: Sendable, Equatable {
  public var item: RollEntry
  /// 1 is the newest.
  public var position: Int
  public var count: Int
  /// A movie playing at its own timing; stopped, a movie shows its first frame.
  public var playing = false
  /// Asking "Delete?" before a delete; shutter says yes, any other button no.
  public var confirmingDelete = false

  public init(item: RollEntry, position: Int, count: Int, playing: Bool = false, confirmingDelete: Bool = false) {
    self.item = item
    self.position = position
    self.count = count
    self.playing = playing
    self.confirmingDelete = confirmingDelete
  }

  /// "12 / 240", as drawn on screen.
  public var positionText: String { "\(position) / \(count)" }
}
