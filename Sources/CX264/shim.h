#ifndef KIOSKCAM_CX264_SHIM_H
#define KIOSKCAM_CX264_SHIM_H
// libx264's own API: H.264 movies without libavcodec and the libraries Debian's FFmpeg links. Only the
// VideoCodec adapter imports it. x264.h wants <stdint.h> first.
#include <stdint.h>
#include <x264.h>

// x264_encoder_open is a macro naming x264_encoder_open_<X264_BUILD> (a link error on a library of another
// API): Swift cannot import it.
static inline x264_t *kioskcam_x264_encoder_open(x264_param_t *param) { return x264_encoder_open(param); }
#endif
