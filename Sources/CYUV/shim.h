#ifndef KIOSKCAM_CYUV_SHIM_H
#define KIOSKCAM_CYUV_SHIM_H
// libyuv, the peer the preview is measured against in `make bench` (Debian's libyuv-dev has no pkg-config file).
// Only the bench links it.
#include <libyuv.h>
#endif
