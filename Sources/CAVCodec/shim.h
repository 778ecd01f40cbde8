#ifndef KIOSKCAM_CAVCODEC_SHIM_H
#define KIOSKCAM_CAVCODEC_SHIM_H
// libavcodec (Debian 12's ffmpeg 5.1, trixie's 7.1) for AAC and for decoding H.264 in review. Only the
// VideoCodec adapter imports it.
//
// Opened on first use, not linked: Debian's build of libavcodec and libavutil links about a hundred other
// libraries (librsvg, glib, cairo, x265, rav1e, libva, X11, ICU...), 14 MiB resident on an x86 host and
// 9.8 MiB on the virtual board, which a service that records Motion-JPEG, or H.264 through libx264, never
// needs. The names are those of the major versions built against.
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>
#include <libavutil/frame.h>
#include <libavutil/error.h>
#include <libavutil/macros.h>

// Function-like macros do not reach Swift.
static inline int kioskcam_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int kioskcam_averror_eof(void) { return AVERROR_EOF; }
static inline int kioskcam_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int kioskcam_pkt_flag_key(void) { return AV_PKT_FLAG_KEY; }

#define KIOSKCAM_LIBAV_FUNCTIONS(F) \
  F(codec, avcodec_version) F(codec, avcodec_find_encoder_by_name) F(codec, avcodec_find_decoder) \
  F(codec, avcodec_alloc_context3) F(codec, avcodec_free_context) F(codec, avcodec_open2) \
  F(codec, avcodec_send_frame) F(codec, avcodec_receive_packet) F(codec, avcodec_send_packet) \
  F(codec, avcodec_receive_frame) F(codec, av_packet_alloc) F(codec, av_packet_free) F(codec, av_packet_unref) \
  F(codec, av_new_packet) \
  F(util, av_log_set_level) F(util, av_strerror) F(util, av_opt_set) F(util, av_mallocz) \
  F(util, av_frame_alloc) F(util, av_frame_free) F(util, av_frame_unref) F(util, av_frame_get_buffer) \
  F(util, av_frame_make_writable) F(util, av_channel_layout_default) F(util, av_channel_layout_copy)

// Every function the adapter calls, as found in the opened libraries.
#define KIOSKCAM_LIBAV_FIELD(library, name) __typeof__(&name) _Nonnull name;
typedef struct {
  KIOSKCAM_LIBAV_FUNCTIONS(KIOSKCAM_LIBAV_FIELD)
} kioskcam_libav;
#undef KIOSKCAM_LIBAV_FIELD

// Opens both libraries and fills `api`; NULL when all went well, else what failed (dlerror's words, or the
// name of a function not found). The libraries stay open for the life of the process.
static inline const char *_Nullable kioskcam_libav_open(kioskcam_libav *_Nonnull api) {
  void *codec = dlopen("libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL);
  if (!codec) return dlerror();
  void *util = dlopen("libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL);
  if (!util) return dlerror();
#define KIOSKCAM_LIBAV_FIND(library, name) \
  if (!(*(void **)&api->name = dlsym(library, #name))) return #name;
  KIOSKCAM_LIBAV_FUNCTIONS(KIOSKCAM_LIBAV_FIND)
#undef KIOSKCAM_LIBAV_FIND
  return NULL;
}

static inline size_t kioskcam_input_buffer_padding(void) { return AV_INPUT_BUFFER_PADDING_SIZE; }
#endif
