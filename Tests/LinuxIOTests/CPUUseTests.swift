import Dispatch
import LinuxIO
import Testing

@Suite struct CPUUseTests {
  @Test func aThreadsTicksAreReadPastANameWithSpacesAndParentheses() {
    let stat = "4242 (kioskcam.movie) x) S 1 4242 4242 0 -1 4194368 310 0 0 0 17 5 0 0 25 5 9 0 7281 0 0"
    #expect(CPUUse.threadTicks(stat: stat, named: "kioskcam.movie") == 22)
    #expect(CPUUse.threadTicks(stat: stat, named: "kioskcam.preview") == nil)
    #expect(CPUUse.threadTicks(stat: "4242 (cut", named: "cut") == nil)
  }

  @Test func aQuotaIsCoresAndMaxIsNone() {
    #expect(CPUUse.quota(cpuMax: "54000 100000\n") == 0.54)
    #expect(CPUUse.quota(cpuMax: "200000 100000") == 2)
    #expect(CPUUse.quota(cpuMax: "max 100000\n") == nil)
    #expect(CPUUse.quota(cpuMax: "") == nil)
  }

  @Test func theUnifiedGroupIsTheZeroLine() {
    #expect(CPUUse.unifiedGroup("0::/system.slice/kioskcam.service\n") == "/system.slice/kioskcam.service")
    #expect(CPUUse.unifiedGroup("12:cpu,cpuacct:/\n0::/kioskcam-throttled\n") == "/kioskcam-throttled")
    #expect(CPUUse.unifiedGroup("12:cpu,cpuacct:/user.slice\n") == nil)
  }

  /// This kernel's own figures: a thread that spins counts under its name and nowhere else.
  @Test func aNamedThreadsCPUIsCountedUnderItsName() {
    let spun = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    OwnThread.start(name: "cpuuse-spinner") {
      let start = threadCPUNanoseconds()
      var sum = 0
      while threadCPUNanoseconds() - start < 80_000_000 { sum &+= 1 }
      precondition(sum != 0)
      spun.signal()
      done.wait()
    }
    spun.wait()
    let named = CPUUse.threadsNanoseconds(named: "cpuuse-spin")
    done.signal()
    #expect(named >= 60_000_000, "\(named) ns")
    #expect(named <= processCPUNanoseconds())
    #expect(CPUUse.threadsNanoseconds(named: "no-such-thread") == 0)
  }

  @Test func theCoresAreBetweenOneAndTheMachines() {
    let cores = CPUUse.cores()
    #expect(cores > 0 && cores <= 4096)
    // The threads the service sizes its pools by are the same cores, counted whole.
    #expect(CPUUse.threads() == Int(cores.rounded(.up)))
  }

  @Test func threadsAreTheCoresRoundedUpAndAtLeastOne() {
    // 27% of each of two cores (the board's Pi-class quota) is one thread; a quota just past a core is two.
    #expect([0, 0.27, 0.54, 1, 1.08, 2, 2.5].map(CPUUse.threads(cores:)) == [1, 1, 1, 1, 2, 2, 3])
  }
}
