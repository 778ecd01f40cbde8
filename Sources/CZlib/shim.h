#ifndef KIOSKCAM_CZLIB_SHIM_H
#define KIOSKCAM_CZLIB_SHIM_H
// zlib imports cleanly; the console fonts ship gzipped and Foundation on Linux has no gzip reader.
#include <zlib.h>
#endif
