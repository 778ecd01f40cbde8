import Testing

@testable import KioskCore

/// `camera-roll` from fake facts: a card that did not mount must never pass as the root file system.
@Suite struct RollStorageCheckTests {
  static let mebibyte: UInt64 = 1_048_576
  /// A roll on its own mounted file system (device 20) under a root on device 1, with 100 MiB free.
  static func mounted() -> RollStorageFacts {
    RollStorageFacts(
      path: "/media/roll", isDirectory: true, writable: true, availableBytes: 100 * mebibyte, device: 20,
      parentDevice: 1, rootDevice: 1, expectedDevice: nil)
  }
  static func roll(_ mount: RollMount, reserve: Int = 64) -> Config.Roll {
    var roll = Config.Roll()
    roll.path = "/media/roll"
    roll.mount = mount
    roll.reserveMegabytes = reserve
    return roll
  }

  @Test func aMountedWritableRollWithSpacePasses() {
    let result = RollStorageCheck.evaluate(Self.mounted(), roll: Self.roll(.separate))
    #expect(result == .pass(.cameraRoll, "/media/roll: writable, on its own file system, 100 MiB free, reserve 64 MiB"))
  }

  @Test func aFolderOnTheRootFileSystemFailsUnlessAnyIsAllowed() {
    var facts = Self.mounted()
    facts.device = 1
    #expect(
      RollStorageCheck.evaluate(facts, roll: Self.roll(.separate))
        == .fail(.cameraRoll, "/media/roll: on the root file system, expected a separate one (storage not mounted?)"))
    #expect(
      RollStorageCheck.evaluate(facts, roll: Self.roll(.mountPoint))
        == .fail(.cameraRoll, "/media/roll: not a mount point (storage not mounted?)"))
    #expect(RollStorageCheck.evaluate(facts, roll: Self.roll(.any)).passed)
  }

  @Test func aSubfolderOfAMountIsNotAMountPoint() {
    var facts = Self.mounted()
    facts.parentDevice = 20
    #expect(!RollStorageCheck.evaluate(facts, roll: Self.roll(.mountPoint)).passed)
    #expect(RollStorageCheck.evaluate(facts, roll: Self.roll(.separate)).passed)
  }

  @Test func aLabelMustBeAttachedAndBeWhereTheRollIs() {
    var facts = Self.mounted()
    #expect(
      RollStorageCheck.evaluate(facts, roll: Self.roll(.label("KIOSKROLL")))
        == .fail(.cameraRoll, "/media/roll: /dev/disk/by-label/KIOSKROLL does not exist (label:KIOSKROLL not attached?)"))
    facts.expectedDevice = 21
    #expect(
      RollStorageCheck.evaluate(facts, roll: Self.roll(.uuid("1234-ABCD")))
        == .fail(.cameraRoll, "/media/roll: not on /dev/disk/by-uuid/1234-ABCD (uuid:1234-ABCD not mounted there?)"))
    facts.expectedDevice = 20
    #expect(RollStorageCheck.evaluate(facts, roll: Self.roll(.label("KIOSKROLL"))).passed)
  }

  @Test func missingNotWritableAndFullEachSayWhy() {
    var facts = Self.mounted()
    facts.availableBytes = 64 * Self.mebibyte
    #expect(
      RollStorageCheck.evaluate(facts, roll: Self.roll(.separate))
        == .fail(.cameraRoll, "/media/roll: 64 MiB free, reserve 64 MiB: full"))
    #expect(RollStorageCheck.evaluate(facts, roll: Self.roll(.separate, reserve: 0)).passed)
    facts.writable = false
    #expect(
      RollStorageCheck.evaluate(facts, roll: Self.roll(.separate))
        == .fail(.cameraRoll, "/media/roll: not writable (on its own file system)"))
    facts.isDirectory = false
    #expect(
      RollStorageCheck.evaluate(facts, roll: Self.roll(.any))
        == .fail(.cameraRoll, "/media/roll: no such directory (storage not mounted, or the folder is missing)"))
  }

  @Test func whileRunningOnlyThePlaceCountsNotTheSpace() {
    var facts = Self.mounted()
    facts.availableBytes = 0
    #expect(
      RollStorageCheck.evaluate(facts, roll: Self.roll(.separate), spaceCounts: false)
        == .pass(.cameraRoll, "/media/roll: writable, on its own file system"), "full is Storage full, not a lost roll")
    facts.isDirectory = false
    #expect(!RollStorageCheck.evaluate(facts, roll: Self.roll(.separate), spaceCounts: false).passed)
    facts = Self.mounted()
    facts.device = 1  // unmounted: the folder left behind on the root file system
    #expect(!RollStorageCheck.evaluate(facts, roll: Self.roll(.separate), spaceCounts: false).passed)
  }
}
