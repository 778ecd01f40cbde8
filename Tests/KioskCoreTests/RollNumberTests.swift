import Testing

@testable import KioskCore

@Suite struct RollNumberTests {
  @Test func namesFollowDCF() {
    let number = RollNumber(folder: 100, file: 1)!
    #expect(number.folderName(suffix: "KIOSK") == "100KIOSK")
    #expect(number.fileName(.still) == "IMG_0001.JPG")
    #expect(number.fileName(.movie) == "IMG_0001.MOV")
    #expect(RollNumber(folder: 123, file: 45)!.fileName(.still) == "IMG_0045.JPG")
  }

  @Test func aFullFolderMovesOnToTheNext() {
    #expect(RollNumber(folder: 100, file: 9998)!.next == RollNumber(folder: 100, file: 9999))
    #expect(RollNumber(folder: 100, file: 9999)!.next == RollNumber(folder: 101, file: 1))
    #expect(RollNumber(folder: 999, file: 9999)!.next == nil)
  }

  @Test func outOfRangeNumbersDoNotExist() {
    #expect(RollNumber(folder: 99, file: 1) == nil)
    #expect(RollNumber(folder: 1000, file: 1) == nil)
    #expect(RollNumber(folder: 100, file: 0) == nil)
    #expect(RollNumber(folder: 100, file: 10000) == nil)
  }

  @Test(arguments: [
    ("100KIOSK", 100 as Int?), ("999ABCDE", 999), ("101_____", 101), ("099KIOSK", nil), ("100kiosk", nil),
    ("100KIOS", nil), ("ABCKIOSK", nil), ("100KIOSKX", nil),
  ])
  func folderNames(name: String, number: Int?) {
    #expect(RollNumber.folderNumber(of: name) == number)
  }

  @Test(arguments: [
    ("IMG_0001.JPG", 1 as Int?), ("IMG_9999.MOV", 9999), ("IMG_0000.JPG", nil), (".tmp-IMG_0001.JPG", nil),
    ("IMG_001.JPG", nil), ("DSC_0001.JPG", nil), ("IMG_00a1.JPG", nil),
  ])
  func fileNames(name: String, number: Int?) {
    #expect(RollNumber.fileNumber(of: name) == number)
  }

  @Test func orderIsFolderThenFile() {
    #expect(RollNumber(folder: 100, file: 9999)! < RollNumber(folder: 101, file: 1)!)
    #expect(RollNumber(folder: 101, file: 2)! > RollNumber(folder: 101, file: 1)!)
  }
}
