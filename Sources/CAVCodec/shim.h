#ifndef KIOSKCAM_CAVCODEC_SHIM_H
#define KIOSKCAM_CAVCODEC_SHIM_H
// libavcodec 59 (Debian 12's ffmpeg 5.1): H.264 through libx264. Only the VideoCodec adapter imports it.
#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>
#include <libavutil/frame.h>
#include <libavutil/error.h>

// Function-like macros do not reach Swift.
static inline int kioskcam_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int kioskcam_averror_eof(void) { return AVERROR_EOF; }
static inline int kioskcam_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int kioskcam_pkt_flag_key(void) { return AV_PKT_FLAG_KEY; }
#endif
