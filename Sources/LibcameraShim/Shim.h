// What the shim's two files share: the handles' C++ definitions and the error funnel. Not installed, not seen
// by Swift (include/kioskcam_libcamera.h is the API).
#pragma once

#include <libcamera/libcamera.h>

#include <cerrno>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kioskcam_libcamera.h"

struct kioskcam_lc_manager {
  std::unique_ptr<libcamera::CameraManager> manager;
};

// One acquired camera. libcamera calls `completed` and `disconnected` on its own thread; everything else is
// the caller's thread. `mutex` guards `done` and `removed`, the only state both threads touch.
struct kioskcam_lc_camera {
  std::shared_ptr<libcamera::Camera> camera;
  std::unique_ptr<libcamera::CameraConfiguration> configuration;
  std::unique_ptr<libcamera::FrameBufferAllocator> allocator;
  libcamera::Stream *stream = nullptr;
  // One request a buffer, its cookie the buffer's index; `queued` says which libcamera holds now.
  std::vector<std::unique_ptr<libcamera::Request>> requests;
  std::vector<bool> queued;
  bool started = false;
  int eventfd = -1;

  std::mutex mutex;
  std::deque<kioskcam_lc_frame> done;
  bool removed = false;

  void completed(libcamera::Request *request);
  void disconnected();
  // Makes the eventfd readable; called with `mutex` held.
  void signal();
  // Empties the eventfd once nothing is left to report; called with `mutex` held.
  void drain();
};

// Writes `message` into the caller's buffer and returns `status` (a negative errno).
inline int kioskcam_lc_fail(char *error, size_t size, int status, const std::string &message) {
  if (error && size > 0) std::snprintf(error, size, "%s", message.c_str());
  return status;
}

// Runs `body` so that no C++ exception (std::bad_alloc, above all) crosses into C.
template <typename Body> int kioskcam_lc_guarded(char *error, size_t size, Body body) {
  try {
    return body();
  } catch (const std::exception &exception) {
    return kioskcam_lc_fail(error, size, -EIO, std::string("libcamera shim: ") + exception.what());
  } catch (...) {
    return kioskcam_lc_fail(error, size, -EIO, "libcamera shim: unknown C++ exception");
  }
}
