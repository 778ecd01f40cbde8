#ifndef KIOSKCAM_CTURBOJPEG_SHIM_H
#define KIOSKCAM_CTURBOJPEG_SHIM_H
// TurboJPEG 2.1 (Debian 12) imports cleanly; the shim only pins the header.
#include <turbojpeg.h>
#endif
