// libcamera's C++ headers, found through pkg-config (libcamera.pc's -I and -l): only the C++ shim
// (Sources/LibcameraShim) depends on this module, and only its shared library links libcamera.
#include <libcamera/libcamera.h>
