import Testing

@testable import KioskCore

func entry(_ file: Int, _ kind: MediaKind = .still, folder: Int = 100) -> RollEntry {
  let number = RollNumber(folder: folder, file: file)!
  return RollEntry(path: "DCIM/\(number.folderName(suffix: "KIOSK"))/\(number.fileName(kind))", number: number, kind: kind)
}

@Suite struct RollReviewTests {
  @Test func entriesParseFromDCFPathsOnly() {
    #expect(RollEntry(path: "DCIM/100KIOSK/IMG_0012.JPG") == entry(12))
    #expect(RollEntry(path: "DCIM/101KIOSK/IMG_0003.MOV") == entry(3, .movie, folder: 101))
    #expect(RollEntry(path: "DCIM/100KIOSK/.tmp-IMG_0012.JPG") == nil)
    #expect(RollEntry(path: "DCIM/100KIOSK/IMG_0012.TXT") == nil)
    #expect(RollEntry(path: "IMG_0012.JPG") == nil)
  }

  @Test func newestFirstAcrossFoldersAndPositionsFromOne() {
    var review = RollReview([entry(9999), entry(1, folder: 101), entry(5)])
    #expect(review.items == [entry(1, folder: 101), entry(9999), entry(5)])
    #expect(review.current == entry(1, folder: 101))
    #expect(review.position == 1)
    review.older()
    #expect(review.current == entry(9999))
    #expect(review.position == 2)
  }

  @Test func olderAndNewerGoRoundAtTheEnds() {
    var review = RollReview([entry(1), entry(2), entry(3)])
    review.newer()
    #expect(review.current == entry(1), "before the newest comes the oldest")
    review.older()
    #expect(review.current == entry(3), "past the oldest comes the newest")
  }

  @Test func aNewItemKeepsTheSelectionAndMovesItsPosition() {
    var review = RollReview([entry(1), entry(2), entry(3)])
    review.older()
    #expect(review.current == entry(2) && review.position == 2)
    review.update([entry(1), entry(2), entry(3), entry(4)])
    #expect(review.current == entry(2))
    #expect(review.position == 3)
    #expect(review.items.count == 4)
  }

  @Test func aVanishedItemGivesWayToTheNextOlderOne() {
    var review = RollReview([entry(1), entry(2), entry(3)])
    review.older()
    review.update([entry(1), entry(3)])
    #expect(review.current == entry(1))
    review.update([entry(3)])
    #expect(review.current == entry(3), "no older one: the oldest left")
    review.remove(entry(3).path)
    #expect(review.current == nil && review.isEmpty)
  }
}

/// Review mode in the kiosk: the mode button enters it, the shutter and cancel buttons step through the roll and play.
@Suite struct ReviewModeTests {
  let timing = KioskTests.timing
  func ms(_ value: Int64) -> Instant { Instant(nanoseconds: value * 1_000_000) }

  func kiosk(roll: [RollEntry] = [entry(1), entry(2, .movie), entry(3)], allowDelete: Bool = false) -> Kiosk {
    var kiosk = Kiosk(
      settings: KioskSettings(gestures: timing, reviewIdle: .seconds(20), allowDelete: allowDelete))
    _ = kiosk.handle(.available([.still, .review], at: ms(0)))
    _ = kiosk.handle(.roll(roll, at: ms(0)))
    return kiosk
  }

  func click(_ kiosk: inout Kiosk, _ role: ButtonRole, at time: Int64, hold: Int64 = 100) -> [Action] {
    var actions = kiosk.handle(.edge(role, .pressed, at: ms(time)))
    actions += kiosk.handle(.tick(ms(time + 5)))
    if hold >= 800 { actions += kiosk.handle(.tick(ms(time + 800))) }
    actions += kiosk.handle(.edge(role, .released, at: ms(time + hold)))
    actions += kiosk.handle(.tick(ms(time + hold + 30)))
    return actions
  }

  func reviewing(_ kiosk: Kiosk) -> ReviewView? {
    if case .reviewing(let view) = kiosk.screen { view } else { nil }
  }

  @Test func theModeButtonEntersReviewAtTheNewestItem() {
    var kiosk = kiosk()
    let actions = click(&kiosk, .mode, at: 1000)
    #expect(kiosk.mode == .review)
    let view = ReviewView(item: entry(3), position: 1, count: 3)
    #expect(actions.contains(.show(.reviewing(view))))
    #expect(view.positionText == "1 / 3")
    #expect(actions.contains(.light(.ready, false)), "nothing to shoot in review")
    _ = click(&kiosk, .mode, at: 2000)
    #expect(kiosk.mode == .still && kiosk.screen == .live(.still), "and leaves it the same way")
  }

  @Test func reviewIsNotOfferedWithAnEmptyRollOrWithoutTheService() {
    var empty = kiosk(roll: [])
    #expect(!empty.available.contains(.review))
    _ = click(&empty, .mode, at: 1000)
    #expect(empty.mode == .still)
    _ = empty.handle(.roll([entry(1)], at: ms(2000)))
    #expect(empty.available.contains(.review), "the first picture makes it available")

    var noDisplay = Kiosk(settings: KioskSettings(gestures: timing))
    _ = noDisplay.handle(.available([.still], at: ms(0)))
    _ = noDisplay.handle(.roll([entry(1)], at: ms(0)))
    #expect(!noDisplay.available.contains(.review))
  }

  @Test func shutterShortIsOlderLongIsNewerAndTakesNoPicture() {
    var kiosk = kiosk()
    _ = click(&kiosk, .mode, at: 1000)
    var actions = click(&kiosk, .shutter, at: 2000)
    #expect(reviewing(kiosk) == ReviewView(item: entry(2, .movie), position: 2, count: 3))
    #expect(!actions.contains { if case .saveStill = $0 { true } else { false } })
    actions = click(&kiosk, .shutter, at: 3000)
    #expect(reviewing(kiosk)?.item == entry(1))
    #expect(reviewing(kiosk)?.positionText == "3 / 3")
    actions = click(&kiosk, .shutter, at: 4000, hold: 1200)
    #expect(reviewing(kiosk)?.item == entry(2, .movie), "a long press goes back to the newer one")
    // The long press decides at the hold time, before the release.
    _ = kiosk.handle(.edge(.shutter, .pressed, at: ms(6000)))
    _ = kiosk.handle(.tick(ms(6800)))
    #expect(reviewing(kiosk)?.item == entry(3))
    _ = kiosk.handle(.edge(.shutter, .released, at: ms(7000)))
    _ = kiosk.handle(.tick(ms(7100)))
    #expect(reviewing(kiosk)?.item == entry(3), "the release of a long press is not also a short one")
  }

  @Test func cancelPlaysAndStopsAMovieOnly() {
    var kiosk = kiosk()
    _ = click(&kiosk, .mode, at: 1000)
    _ = click(&kiosk, .cancel, at: 1500)
    #expect(reviewing(kiosk)?.playing == false, "a still does not play")
    _ = click(&kiosk, .shutter, at: 2000)
    _ = click(&kiosk, .cancel, at: 3000)
    #expect(reviewing(kiosk)?.playing == true)
    _ = click(&kiosk, .cancel, at: 4000)
    #expect(reviewing(kiosk)?.playing == false, "cancel again stops it")
    _ = click(&kiosk, .cancel, at: 5000)
    _ = kiosk.handle(.playbackEnded(at: ms(7000)))
    #expect(reviewing(kiosk)?.playing == false, "the end of the movie stops it")
    _ = click(&kiosk, .cancel, at: 8000)
    _ = click(&kiosk, .shutter, at: 9000)
    #expect(reviewing(kiosk) == ReviewView(item: entry(1), position: 3, count: 3), "moving on stops it")
  }

  @Test func theIdleTimeoutGoesBackToTheLivePictureButNotDuringAMovie() {
    var kiosk = kiosk()
    _ = click(&kiosk, .mode, at: 1000)
    _ = click(&kiosk, .shutter, at: 5000)
    #expect(kiosk.nextDeadline == ms(25_100), "20 s after the last release")
    _ = kiosk.handle(.tick(ms(25_099)))
    #expect(kiosk.mode == .review)
    _ = click(&kiosk, .cancel, at: 25_000)
    #expect(reviewing(kiosk)?.playing == true)
    #expect(kiosk.nextDeadline == nil, "a movie that plays holds the screen")
    _ = kiosk.handle(.playbackEnded(at: ms(30_000)))
    #expect(kiosk.nextDeadline == ms(50_000))
    let actions = kiosk.handle(.tick(ms(50_000)))
    #expect(kiosk.mode == .still)
    #expect(actions.contains(.show(.live(.still))))
    #expect(actions.contains(.light(.ready, true)))
  }

  @Test func aStillFromTheControlSocketJoinsTheListAndTheScreenStays() {
    var kiosk = kiosk()
    _ = click(&kiosk, .mode, at: 1000)
    _ = click(&kiosk, .shutter, at: 2000)
    _ = kiosk.handle(.frame(FrameInfo(sequence: 1, timestamp: ms(2900))))
    var actions = kiosk.handle(.remote(.shutter, at: ms(3000)))
    actions += kiosk.handle(.frame(FrameInfo(sequence: 2, timestamp: ms(3010))))
    #expect(actions.contains(.saveStill(FrameInfo(sequence: 2, timestamp: ms(3010)), pressedAt: ms(3000))))
    #expect(kiosk.mode == .review)
    _ = kiosk.handle(.stillSaved(name: entry(4).path, at: ms(3200)))
    actions = kiosk.handle(.roll([entry(1), entry(2, .movie), entry(3), entry(4)], at: ms(3300)))
    #expect(actions.contains(.show(.reviewing(ReviewView(item: entry(2, .movie), position: 3, count: 4)))))
  }

  @Test func deleteIsOffByDefault() {
    var kiosk = kiosk()
    _ = click(&kiosk, .mode, at: 1000)
    let actions = click(&kiosk, .cancel, at: 2000, hold: 1200) + click(&kiosk, .shutter, at: 4000)
    #expect(!actions.contains { if case .deleteItem = $0 { true } else { false } })
    #expect(actions.contains(.log("delete from the kiosk is off ([review] allow-delete)")))
  }

  @Test func deleteAsksFirstAndShutterConfirms() {
    var kiosk = kiosk(allowDelete: true)
    _ = click(&kiosk, .mode, at: 1000)
    _ = click(&kiosk, .cancel, at: 2000, hold: 1200)
    #expect(reviewing(kiosk)?.confirmingDelete == true)
    var actions = click(&kiosk, .cancel, at: 4000)
    #expect(reviewing(kiosk)?.confirmingDelete == false, "cancel keeps it")
    #expect(!actions.contains { if case .deleteItem = $0 { true } else { false } })
    _ = click(&kiosk, .cancel, at: 5000, hold: 1200)
    actions = click(&kiosk, .shutter, at: 7000)
    #expect(actions.contains(.deleteItem(entry(3).path)))
    #expect(reviewing(kiosk) == ReviewView(item: entry(2, .movie), position: 1, count: 2))
  }

  @Test func deletingTheLastItemLeavesReview() {
    var kiosk = kiosk(roll: [entry(1)], allowDelete: true)
    _ = click(&kiosk, .mode, at: 1000)
    _ = click(&kiosk, .cancel, at: 2000, hold: 1200)
    let actions = click(&kiosk, .shutter, at: 4000)
    #expect(actions.contains(.deleteItem(entry(1).path)))
    #expect(kiosk.mode == .still && !kiosk.available.contains(.review))
  }

  @Test func anEmptiedRollLeavesReview() {
    var kiosk = kiosk()
    _ = click(&kiosk, .mode, at: 1000)
    _ = kiosk.handle(.roll([], at: ms(2000)))
    #expect(kiosk.mode == .still && kiosk.screen == .live(.still))
  }
}
