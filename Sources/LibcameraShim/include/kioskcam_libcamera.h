#ifndef KIOSKCAM_LIBCAMERA_H
#define KIOSKCAM_LIBCAMERA_H
// The libcamera backend's C API: libcamera's C++ objects, signals and buffers behind opaque handles, so that
// Swift (whose C++ interoperability does not import CameraManager, Camera or Request on 6.0.3) never touches
// them. Built into its own shared library, libkioskcam-libcamera.so, which the service opens with dlopen at
// first use (Sources/CLibcameraShim/shim.h): a kiosk without libcamera still runs.
//
// A pull model, like V4L2's dequeue and requeue: each buffer has one request (its cookie is the buffer's
// index); libcamera completes it on its own thread, the shim queues it under a mutex and makes an eventfd
// readable; the caller dequeues from its loop and queues the buffer again. A camera that goes away
// (libcamera's disconnected signal) makes the same eventfd readable and the next dequeue says so.
//
// Every call returns 0 or a negative errno and, on failure, writes a message into `error` (always
// terminated, cut at `error_size`). No C++ exception crosses this boundary.
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Bumped whenever a function or struct below changes: the loader refuses a library of another ABI.
#define KIOSKCAM_LC_ABI 3
#define KIOSKCAM_LC_MAX_PLANES 4
#define KIOSKCAM_LC_MAX_FORMATS 16
#define KIOSKCAM_LC_MAX_SIZES 32

typedef struct kioskcam_lc_manager kioskcam_lc_manager;
typedef struct kioskcam_lc_camera kioskcam_lc_camera;

typedef struct {
  uint32_t width, height;
} kioskcam_lc_size;

// One pixel format a camera offers for the viewfinder role, with its sizes. `fourcc` is libcamera's
// (DRM) code, `name` its spelling (NV12, YUV420, MJPEG...). A camera that takes any size in a range lists
// the range's two ends with `range` set.
typedef struct {
  uint32_t fourcc;
  char name[16];
  uint32_t size_count;
  int32_t range;
  kioskcam_lc_size sizes[KIOSKCAM_LC_MAX_SIZES];
} kioskcam_lc_format;

typedef struct {
  char id[256];
  char model[128];
  // properties::Location: 0 front, 1 back, 2 external, -1 not given.
  int32_t location;
  int32_t has_scaler_crop;
  int32_t has_af_trigger;
  uint32_t format_count;
  kioskcam_lc_format formats[KIOSKCAM_LC_MAX_FORMATS];
} kioskcam_lc_camera_info;

typedef struct {
  int32_t x, y;
  uint32_t width, height;
} kioskcam_lc_rect;

// What configure settled on (libcamera may adjust the size or the format).
typedef struct {
  uint32_t fourcc;
  uint32_t width, height;
  uint32_t stride;
  uint32_t frame_size;
  uint32_t buffer_count;
  // The stream's colour space says full-range YCbCr (a Pi's ISP gives sYCC, full range, for the viewfinder);
  // 0 for limited or not said, which is V4L2's default for YCbCr.
  int32_t full_range;
  // controls::ScalerCrop's limits for this configuration, in the sensor's pixel array: the widest crop the
  // stream shows by default, and the smallest the pipeline takes. Zero sizes when the camera has no ScalerCrop.
  kioskcam_lc_rect crop_default;
  kioskcam_lc_size crop_minimum;
} kioskcam_lc_stream;

// One plane of one buffer: a dmabuf the caller maps (several planes often share one fd at offsets).
typedef struct {
  int32_t fd;
  uint32_t offset;
  uint32_t length;
} kioskcam_lc_plane;

enum {
  KIOSKCAM_LC_FRAME_SUCCESS = 0,
  KIOSKCAM_LC_FRAME_ERROR = 1,
  KIOSKCAM_LC_FRAME_CANCELLED = 2,
};

typedef struct {
  uint32_t index;
  uint32_t status;  // KIOSKCAM_LC_FRAME_*
  uint32_t sequence;
  uint32_t plane_count;
  uint32_t bytes_used[KIOSKCAM_LC_MAX_PLANES];
  // controls::SensorTimestamp in ns, else the buffer's own timestamp; `sensor_timestamp` says which. libcamera
  // documents CLOCK_BOOTTIME, but its pipelines (uvcvideo, simple, rpi) copy the V4L2 buffer's timestamp, which
  // the kernel takes on CLOCK_MONOTONIC, the clock of the GPIO edges (and BOOTTIME only differs after a suspend).
  uint64_t timestamp_ns;
  int32_t sensor_timestamp;
  // From the request's metadata where the pipeline reports them (a Pi's IPA does; uvcvideo does not):
  // controls::ExposureTime in microseconds, -1 when not reported; controls::AnalogueGain, 0 when not reported.
  int32_t exposure_us;
  float analogue_gain;
} kioskcam_lc_frame;

int kioskcam_lc_abi(void);
// libcamera's version as the library reports it ("v0.0.3+..."), not the headers'.
const char *kioskcam_lc_version(void);

// libcamera allows one CameraManager a process: a second create fails with -EBUSY.
int kioskcam_lc_manager_create(kioskcam_lc_manager **manager, char *error, size_t error_size);
void kioskcam_lc_manager_destroy(kioskcam_lc_manager *manager);
// How many cameras there are now, and each one's description by position in that list.
int kioskcam_lc_camera_count(kioskcam_lc_manager *manager);
int kioskcam_lc_camera_describe(kioskcam_lc_manager *manager, uint32_t position, kioskcam_lc_camera_info *info,
                                char *error, size_t error_size);

// Acquires the camera: no other process can use it until close.
int kioskcam_lc_camera_open(kioskcam_lc_manager *manager, const char *id, kioskcam_lc_camera **camera,
                            char *error, size_t error_size);
// Stops it if started, frees its buffers and releases it.
void kioskcam_lc_camera_close(kioskcam_lc_camera *camera);
// One viewfinder stream of `fourcc` at `width`x`height`, `buffer_count` buffers (0: libcamera's choice),
// buffers allocated; `stream` says what was granted.
int kioskcam_lc_camera_configure(kioskcam_lc_camera *camera, uint32_t fourcc, uint32_t width, uint32_t height,
                                 uint32_t buffer_count, kioskcam_lc_stream *stream, char *error, size_t error_size);
int kioskcam_lc_buffer_planes(kioskcam_lc_camera *camera, uint32_t index, kioskcam_lc_plane *planes,
                              uint32_t *plane_count, char *error, size_t error_size);
// Readable when a frame completed or the camera went away; owned by the camera (never close it).
int kioskcam_lc_camera_eventfd(kioskcam_lc_camera *camera);
// Starts streaming; `frame_rate` > 0 fixes the frame duration (controls::FrameDurationLimits) where the camera
// has that control, 0 leaves the pipeline's default. A camera that can focus continuously (controls::AfMode
// offers AfModeContinuous: Camera Module 3) is started so.
int kioskcam_lc_camera_start(kioskcam_lc_camera *camera, uint32_t frame_rate, char *error, size_t error_size);
// Queues buffer `index` (first time or again after a dequeue), cropped to `crop` (controls::ScalerCrop, in the
// pixel array's coordinates) when not NULL.
int kioskcam_lc_camera_queue(kioskcam_lc_camera *camera, uint32_t index, const kioskcam_lc_rect *crop,
                             char *error, size_t error_size);
// 0 and a frame; -EAGAIN when none is waiting; -ENODEV once the camera went away.
int kioskcam_lc_camera_dequeue(kioskcam_lc_camera *camera, kioskcam_lc_frame *frame, char *error,
                               size_t error_size);
int kioskcam_lc_camera_stop(kioskcam_lc_camera *camera, char *error, size_t error_size);

#ifdef __cplusplus
}
#endif
#endif
