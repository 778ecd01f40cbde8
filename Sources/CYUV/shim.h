#ifndef KIOSKCAM_CYUV_SHIM_H
#define KIOSKCAM_CYUV_SHIM_H
// libyuv (Debian's libyuv-dev has no pkg-config file): the preview's conversion, scaling and rotation.
// Only the Scaling adapter imports it (and the bench, to measure it bare).
#include <libyuv.h>
#endif
