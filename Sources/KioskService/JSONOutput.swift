import FoundationEssentials

/// What `--json` prints, for every command that has it (`probe`, `status`, `roll list`): one set-up, so that
/// scripts reading one can read the others. Keys are sorted so that two outputs diff line by line, and
/// slashes stay as written (`/dev/video0`, not `\/dev\/video0`): most of the values are paths.
enum JSONOutput {
  static func text(_ value: some Encodable) -> String? {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) }
  }
}
