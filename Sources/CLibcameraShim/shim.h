#ifndef KIOSKCAM_CLIBCAMERASHIM_SHIM_H
#define KIOSKCAM_CLIBCAMERASHIM_SHIM_H
// The libcamera shim's C API, as function pointers found with dlsym. Only the LibcameraCamera adapter
// imports it.
//
// Opened at first use, not linked: libkioskcam-libcamera.so links libcamera (and libstdc++), which a
// kiosk with a USB webcam, the virtual board, or a host without libcamera does not have; there the
// service runs on V4L2 and a configuration that asks for libcamera gets the loader's reason. The header
// is the shim's own (one declaration of the API); Swift never calls those declarations, only the table.
#include <dlfcn.h>
#include <stddef.h>
#include "../LibcameraShim/include/kioskcam_libcamera.h"

#define KIOSKCAM_LC_FUNCTIONS(F) \
  F(kioskcam_lc_abi) F(kioskcam_lc_version) F(kioskcam_lc_manager_create) F(kioskcam_lc_manager_destroy) \
  F(kioskcam_lc_camera_count) F(kioskcam_lc_camera_describe) F(kioskcam_lc_camera_open) \
  F(kioskcam_lc_camera_close) F(kioskcam_lc_camera_configure) F(kioskcam_lc_buffer_planes) \
  F(kioskcam_lc_camera_eventfd) F(kioskcam_lc_camera_start) F(kioskcam_lc_camera_queue) \
  F(kioskcam_lc_camera_dequeue) F(kioskcam_lc_camera_stop)

// Every function of the shim, as found in the opened library.
#define KIOSKCAM_LC_FIELD(name) __typeof__(&name) _Nonnull name;
typedef struct {
  KIOSKCAM_LC_FUNCTIONS(KIOSKCAM_LC_FIELD)
} kioskcam_lc_api;
#undef KIOSKCAM_LC_FIELD

// Opens the library at `path` and fills `api`; NULL when all went well, else what failed (dlerror's words,
// the name of a function not found, or an ABI other than this header's). The library stays open for the
// life of the process: libcamera keeps threads and static objects that must not be unloaded.
static inline const char *_Nullable kioskcam_lc_open(const char *_Nonnull path, kioskcam_lc_api *_Nonnull api) {
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) return dlerror();
#define KIOSKCAM_LC_FIND(name) \
  if (!(*(void **)&api->name = dlsym(library, #name))) return #name " not found";
  KIOSKCAM_LC_FUNCTIONS(KIOSKCAM_LC_FIND)
#undef KIOSKCAM_LC_FIND
  if (api->kioskcam_lc_abi() != KIOSKCAM_LC_ABI) return "built for another version of kioskcam (shim ABI differs)";
  return NULL;
}

static inline int kioskcam_lc_expected_abi(void) { return KIOSKCAM_LC_ABI; }
#endif
