#ifndef KIOSKCAM_CGPIOD_SHIM_H
#define KIOSKCAM_CGPIOD_SHIM_H
// libgpiod 1.6 imports cleanly; the shim only pins the header so the module map names no path.
#include <gpiod.h>
#endif
