#ifndef KIOSKCAM_CDRM_SHIM_H
#define KIOSKCAM_CDRM_SHIM_H
#include <stdint.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <drm_fourcc.h>

// DRM_IOCTL_* are _IOWR(...) macros: Swift cannot import them.
static inline unsigned long CDRM_IOCTL_MODE_CREATE_DUMB(void) { return DRM_IOCTL_MODE_CREATE_DUMB; }
static inline unsigned long CDRM_IOCTL_MODE_MAP_DUMB(void) { return DRM_IOCTL_MODE_MAP_DUMB; }
static inline unsigned long CDRM_IOCTL_MODE_DESTROY_DUMB(void) { return DRM_IOCTL_MODE_DESTROY_DUMB; }

// DRM_FORMAT_* are built by the fourcc_code() macro: Swift cannot import them.
static inline uint32_t CDRM_FORMAT_XRGB8888(void) { return DRM_FORMAT_XRGB8888; }
static inline uint32_t CDRM_FORMAT_YUYV(void) { return DRM_FORMAT_YUYV; }
static inline uint32_t CDRM_FORMAT_NV12(void) { return DRM_FORMAT_NV12; }

#endif
