import Testing

/// The device tests skip themselves without a board (`make unit-test`, a plain `swift test`); when `make test`
/// started the board for them, a board that is not up fails here with the reason, so that the run cannot
/// pass on unit tests alone.
@Suite struct BoardPresenceTests {
  @Test(.enabled(if: Board.required, "KIOSKCAM_DEVICE_TESTS is not 'required'"))
  func theDeviceTestsRunWhenTheBoardWasStartedForThem() {
    #expect(Board.whyNotUp == nil, "the device tests did not run: \(Board.whyNotUp ?? "")")
  }
}

/// The host side of the device tests: a tool that hangs fails its test instead of holding the whole run.
@Suite struct BoardHostTests {
  @Test func aHostToolStillRunningAtItsTimeoutIsKilledAndTheCallThrows() throws {
    #expect(throws: BoardFailure.self) { try Board.host(["/bin/sleep", "60"], timeout: 1) }
    let quick = try Board.host(["/bin/sh", "-c", "echo out; echo err >&2; exit 3"], timeout: 30)
    #expect(quick.status == 3 && quick.stdout == "out\n" && quick.stderr == "err\n")
  }
}
