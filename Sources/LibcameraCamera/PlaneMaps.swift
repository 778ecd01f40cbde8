#if canImport(Glibc)
  import Glibc
#endif
import LinuxIO

/// Where each plane of a buffer lies in the mappings of its dmabufs. libcamera often puts every plane of a
/// buffer in one dmabuf at offsets (NV12's chroma after its luma), and mmap needs page-aligned offsets: so
/// each distinct fd is mapped once from 0 to its last plane's end, and a plane is a range inside that.
public struct PlaneLayout: Sendable, Equatable {
  public struct Map: Sendable, Equatable {
    public let fd: CInt
    public let length: Int
  }
  public struct Plane: Sendable, Equatable {
    /// Index into `maps`.
    public let map: Int
    public let offset: Int
    public let length: Int
  }
  public let maps: [Map]
  public let planes: [Plane]

  /// `planes`: each plane's (fd, offset, length), in plane order.
  public init(planes given: [(fd: CInt, offset: Int, length: Int)]) {
    var maps: [Map] = []
    var planes: [Plane] = []
    for plane in given {
      let end = plane.offset + plane.length
      if let index = maps.firstIndex(where: { $0.fd == plane.fd }) {
        maps[index] = Map(fd: plane.fd, length: max(maps[index].length, end))
        planes.append(Plane(map: index, offset: plane.offset, length: plane.length))
      } else {
        maps.append(Map(fd: plane.fd, length: end))
        planes.append(Plane(map: maps.count - 1, offset: plane.offset, length: plane.length))
      }
    }
    self.maps = maps
    self.planes = planes
  }
}

/// Every buffer's dmabufs mapped read-only, unmapped together in deinit: the class that owns the ring.
final class MappedBuffers {
  private var regions: [(base: UnsafeMutableRawPointer, count: Int)] = []
  /// For each buffer, each plane's bytes.
  private(set) var planes: [[UnsafeRawBufferPointer]] = []

  func add(_ layout: PlaneLayout) throws(SystemCallError) {
    var bases: [UnsafeMutableRawPointer] = []
    for map in layout.maps {
      guard let base = mmap(nil, map.length, PROT_READ, MAP_SHARED, map.fd, 0), base != MAP_FAILED else {
        throw SystemCallError("mmap dmabuf", Errno.current)
      }
      regions.append((base, map.length))
      bases.append(base)
    }
    planes.append(layout.planes.map { UnsafeRawBufferPointer(start: bases[$0.map] + $0.offset, count: $0.length) })
  }

  deinit { for region in regions { munmap(region.base, region.count) } }
}
