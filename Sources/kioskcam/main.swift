#if canImport(Glibc)
  import Glibc
#endif
import KioskService

exit(Commands.main(Array(CommandLine.arguments.dropFirst())))
