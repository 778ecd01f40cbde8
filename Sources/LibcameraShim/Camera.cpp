// One acquired camera: configure a stream, its buffers, and requests that complete on libcamera's thread and
// are handed to the caller's thread through a queue and an eventfd.
#include <algorithm>
#include <cstring>
#include <sys/eventfd.h>
#include <unistd.h>

#include "Shim.h"

using namespace libcamera;

void kioskcam_lc_camera::signal() {
  uint64_t one = 1;
  // Only EAGAIN can fail here (the counter at its maximum), and then the fd is readable anyway.
  (void)!::write(eventfd, &one, sizeof one);
}

void kioskcam_lc_camera::drain() {
  uint64_t count;
  (void)!::read(eventfd, &count, sizeof count);
}

// libcamera's thread: copy what the caller needs out of the request, and wake the caller.
void kioskcam_lc_camera::completed(Request *request) {
  kioskcam_lc_frame frame{};
  frame.index = static_cast<uint32_t>(request->cookie());
  frame.exposure_us = -1;
  if (request->status() == Request::RequestCancelled) {
    frame.status = KIOSKCAM_LC_FRAME_CANCELLED;
  } else if (!request->buffers().empty()) {
    const FrameMetadata &metadata = request->buffers().begin()->second->metadata();
    frame.status = metadata.status == FrameMetadata::FrameSuccess ? KIOSKCAM_LC_FRAME_SUCCESS
                   : metadata.status == FrameMetadata::FrameCancelled ? KIOSKCAM_LC_FRAME_CANCELLED
                                                                       : KIOSKCAM_LC_FRAME_ERROR;
    frame.sequence = metadata.sequence;
    for (const FrameMetadata::Plane &plane : metadata.planes()) {
      if (frame.plane_count == KIOSKCAM_LC_MAX_PLANES) break;
      frame.bytes_used[frame.plane_count++] = plane.bytesused;
    }
    // The sensor's own stamp is the moment of exposure, which the still's nearest-to-the-press choice needs.
    std::optional<int64_t> sensor = request->metadata().get(controls::SensorTimestamp);
    frame.sensor_timestamp = sensor.has_value();
    frame.timestamp_ns = sensor ? static_cast<uint64_t>(*sensor) : metadata.timestamp;
    // For the still's EXIF ExposureTime and its record: the values this frame was taken with, not the ones asked.
    frame.exposure_us = request->metadata().get(controls::ExposureTime).value_or(-1);
    frame.analogue_gain = request->metadata().get(controls::AnalogueGain).value_or(0.0f);
  } else {
    frame.status = KIOSKCAM_LC_FRAME_ERROR;
  }
  std::lock_guard<std::mutex> lock(mutex);
  done.push_back(frame);
  signal();
}

void kioskcam_lc_camera::disconnected() {
  std::lock_guard<std::mutex> lock(mutex);
  removed = true;
  signal();
}

namespace {
// One wording for a camera that went away, whichever call notices first: libcamera marks the camera disconnected
// (its calls then fail with ENODEV) before it emits `disconnected` on its own thread, so a requeue on the
// caller's thread can see the ENODEV before `removed` is set.
int removedError(kioskcam_lc_camera *handle, char *error, size_t size) {
  return kioskcam_lc_fail(error, size, -ENODEV, "libcamera: " + handle->camera->id() + ": camera removed");
}
}  // namespace

extern "C" int kioskcam_lc_camera_open(kioskcam_lc_manager *manager, const char *id, kioskcam_lc_camera **result,
                                       char *error, size_t size) {
  return kioskcam_lc_guarded(error, size, [&] {
    std::shared_ptr<Camera> camera = manager->manager->get(id);
    if (!camera) return kioskcam_lc_fail(error, size, -ENOENT, std::string("libcamera: no camera ") + id);
    auto handle = std::make_unique<kioskcam_lc_camera>();
    handle->eventfd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (handle->eventfd < 0) return kioskcam_lc_fail(error, size, -errno, std::string("eventfd: ") + std::strerror(errno));
    if (int status = camera->acquire(); status < 0) {
      ::close(handle->eventfd);
      return kioskcam_lc_fail(error, size, status, std::string("libcamera: acquire ") + id + ": " + std::strerror(-status));
    }
    handle->camera = camera;
    camera->requestCompleted.connect(handle.get(), &kioskcam_lc_camera::completed);
    camera->disconnected.connect(handle.get(), &kioskcam_lc_camera::disconnected);
    *result = handle.release();
    return 0;
  });
}

namespace {
// Everything configure made, in the order libcamera needs it undone: requests before their buffers.
void unconfigure(kioskcam_lc_camera *handle) {
  handle->requests.clear();
  handle->queued.clear();
  handle->allocator.reset();
  handle->configuration.reset();
  handle->stream = nullptr;
}

// controls::ScalerCrop's default and smallest crop for the configuration just made: pipelines set its limits
// from the sensor mode they chose (a Pi's: the mode's analogue crop, and the default cut to the stream's
// aspect ratio). Left zero when the camera has no ScalerCrop. A pipeline without a default gives its largest.
void describeCrop(Camera &camera, kioskcam_lc_stream *granted) {
  const ControlInfoMap &controls = camera.controls();
  auto found = controls.find(controls::ScalerCrop.id());
  if (found == controls.end()) return;
  const ControlInfo &info = found->second;
  if (info.min().type() != ControlTypeRectangle || info.max().type() != ControlTypeRectangle) return;
  Rectangle widest = info.max().get<Rectangle>();
  const ControlValue &preferred = info.def();
  if (preferred.type() == ControlTypeRectangle && !preferred.get<Rectangle>().isNull()) widest = preferred.get<Rectangle>();
  Size smallest = info.min().get<Rectangle>().size();
  granted->crop_default = {widest.x, widest.y, widest.width, widest.height};
  granted->crop_minimum = {smallest.width, smallest.height};
}

// Whether the camera's controls::AfMode offers `mode`.
bool offersFocus(const ControlInfoMap &available, int32_t mode) {
  auto found = available.find(controls::AfMode.id());
  if (found == available.end()) return false;
  for (const ControlValue &value : found->second.values())
    if (value.type() == ControlTypeInteger32 && value.get<int32_t>() == mode) return true;
  return false;
}

int stop(kioskcam_lc_camera *handle, char *error, size_t size) {
  if (!handle->started) return 0;
  // stop() cancels every queued request synchronously: those completions are dropped, not reported.
  int status = handle->camera->stop();
  handle->started = false;
  std::lock_guard<std::mutex> lock(handle->mutex);
  handle->done.clear();
  std::fill(handle->queued.begin(), handle->queued.end(), false);
  if (!handle->removed) handle->drain();
  if (status < 0) return kioskcam_lc_fail(error, size, status, std::string("libcamera: stop: ") + std::strerror(-status));
  return 0;
}
}  // namespace

extern "C" void kioskcam_lc_camera_close(kioskcam_lc_camera *handle) {
  if (!handle) return;
  char ignored[8];
  kioskcam_lc_guarded(ignored, sizeof ignored, [&] {
    stop(handle, ignored, sizeof ignored);
    unconfigure(handle);
    handle->camera->requestCompleted.disconnect(handle);
    handle->camera->disconnected.disconnect(handle);
    handle->camera->release();
    return 0;
  });
  ::close(handle->eventfd);
  delete handle;
}

extern "C" int kioskcam_lc_camera_configure(kioskcam_lc_camera *handle, uint32_t fourcc, uint32_t width,
                                            uint32_t height, uint32_t buffer_count, kioskcam_lc_stream *granted,
                                            char *error, size_t size) {
  return kioskcam_lc_guarded(error, size, [&] {
    if (handle->started) return kioskcam_lc_fail(error, size, -EBUSY, "libcamera: configure while streaming");
    unconfigure(handle);
    std::vector<StreamRole> roles{StreamRole::Viewfinder};
    std::unique_ptr<CameraConfiguration> configuration = handle->camera->generateConfiguration(roles);
    if (!configuration || configuration->empty())
      return kioskcam_lc_fail(error, size, -EINVAL, "libcamera: no viewfinder configuration");
    StreamConfiguration &wanted = configuration->at(0);
    wanted.pixelFormat = PixelFormat(fourcc);
    wanted.size = Size(width, height);
    if (buffer_count > 0) wanted.bufferCount = buffer_count;
    if (configuration->validate() == CameraConfiguration::Invalid)
      return kioskcam_lc_fail(error, size, -EINVAL, "libcamera: " + wanted.toString() + " is invalid");
    if (int status = handle->camera->configure(configuration.get()); status < 0)
      return kioskcam_lc_fail(error, size, status, "libcamera: configure " + wanted.toString() + ": " + std::strerror(-status));
    handle->configuration = std::move(configuration);
    handle->stream = wanted.stream();
    handle->allocator = std::make_unique<FrameBufferAllocator>(handle->camera);
    if (int status = handle->allocator->allocate(handle->stream); status < 0) {
      unconfigure(handle);
      return kioskcam_lc_fail(error, size, status, std::string("libcamera: allocate buffers: ") + std::strerror(-status));
    }
    const std::vector<std::unique_ptr<FrameBuffer>> &buffers = handle->allocator->buffers(handle->stream);
    for (size_t index = 0; index < buffers.size(); index++) {
      std::unique_ptr<Request> request = handle->camera->createRequest(index);
      if (!request || request->addBuffer(handle->stream, buffers[index].get()) < 0) {
        unconfigure(handle);
        return kioskcam_lc_fail(error, size, -ENOMEM, "libcamera: request for buffer " + std::to_string(index));
      }
      handle->requests.push_back(std::move(request));
    }
    handle->queued.assign(buffers.size(), false);
    bool full = wanted.colorSpace && wanted.colorSpace->range == ColorSpace::Range::Full;
    *granted = {wanted.pixelFormat.fourcc(), wanted.size.width, wanted.size.height, wanted.stride, wanted.frameSize,
                static_cast<uint32_t>(buffers.size()), full ? 1 : 0, {}, {}};
    describeCrop(*handle->camera, granted);
    return 0;
  });
}

extern "C" int kioskcam_lc_buffer_planes(kioskcam_lc_camera *handle, uint32_t index, kioskcam_lc_plane *planes,
                                         uint32_t *count, char *error, size_t size) {
  return kioskcam_lc_guarded(error, size, [&] {
    if (index >= handle->requests.size())
      return kioskcam_lc_fail(error, size, -EINVAL, "libcamera: no buffer " + std::to_string(index));
    const std::vector<FrameBuffer::Plane> &found = handle->allocator->buffers(handle->stream)[index]->planes();
    *count = 0;
    for (const FrameBuffer::Plane &plane : found) {
      if (*count == KIOSKCAM_LC_MAX_PLANES) break;
      planes[(*count)++] = {plane.fd.get(), plane.offset, plane.length};
    }
    return 0;
  });
}

extern "C" int kioskcam_lc_camera_eventfd(kioskcam_lc_camera *handle) { return handle->eventfd; }

extern "C" int kioskcam_lc_camera_start(kioskcam_lc_camera *handle, uint32_t frame_rate, char *error, size_t size) {
  return kioskcam_lc_guarded(error, size, [&] {
    if (!handle->stream) return kioskcam_lc_fail(error, size, -EINVAL, "libcamera: start before configure");
    const ControlInfoMap &available = handle->camera->controls();
    ControlList startControls(available);
    // Left to itself the pipeline picks the frame duration, and a Pi's exposure control may lengthen frames in
    // low light: a movie would get fewer frames than `[camera] frame-rate` asks. find, not count: count asks
    // libcamera's whole list of controls, not this camera's (Manager.cpp).
    if (frame_rate > 0 && available.find(controls::FrameDurationLimits.id()) != available.end()) {
      const int64_t frame[2] = {1000000 / frame_rate, 1000000 / frame_rate};
      startControls.set(controls::FrameDurationLimits, Span<const int64_t, 2>(frame));
    }
    // A kiosk's subject walks up to it: continuous autofocus keeps the preview and every frame of the ring sharp,
    // where a focus sweep at the press (AfTrigger in AfModeAuto) would make the still wait for it.
    if (offersFocus(available, controls::AfModeContinuous))
      startControls.set(controls::AfMode, controls::AfModeContinuous);
    if (int status = handle->camera->start(&startControls); status < 0) {
      if (status == -ENODEV) return removedError(handle, error, size);
      return kioskcam_lc_fail(error, size, status, std::string("libcamera: start: ") + std::strerror(-status));
    }
    handle->started = true;
    return 0;
  });
}

extern "C" int kioskcam_lc_camera_queue(kioskcam_lc_camera *handle, uint32_t index, const kioskcam_lc_rect *crop,
                                        char *error, size_t size) {
  return kioskcam_lc_guarded(error, size, [&] {
    if (index >= handle->requests.size())
      return kioskcam_lc_fail(error, size, -EINVAL, "libcamera: no buffer " + std::to_string(index));
    if (handle->queued[index])
      return kioskcam_lc_fail(error, size, -EBUSY, "libcamera: buffer " + std::to_string(index) + " is queued");
    Request &request = *handle->requests[index];
    if (request.status() != Request::RequestPending) request.reuse(Request::ReuseBuffers);
    if (crop) request.controls().set(controls::ScalerCrop, Rectangle(crop->x, crop->y, crop->width, crop->height));
    if (int status = handle->camera->queueRequest(&request); status < 0) {
      if (status == -ENODEV) return removedError(handle, error, size);
      return kioskcam_lc_fail(error, size, status, std::string("libcamera: queue request: ") + std::strerror(-status));
    }
    handle->queued[index] = true;
    return 0;
  });
}

extern "C" int kioskcam_lc_camera_dequeue(kioskcam_lc_camera *handle, kioskcam_lc_frame *frame, char *error,
                                          size_t size) {
  return kioskcam_lc_guarded(error, size, [&] {
    std::lock_guard<std::mutex> lock(handle->mutex);
    if (handle->done.empty()) {
      if (handle->removed) return removedError(handle, error, size);
      handle->drain();
      return -EAGAIN;
    }
    *frame = handle->done.front();
    handle->done.pop_front();
    if (frame->index < handle->queued.size()) handle->queued[frame->index] = false;
    if (handle->done.empty() && !handle->removed) handle->drain();
    return 0;
  });
}

extern "C" int kioskcam_lc_camera_stop(kioskcam_lc_camera *handle, char *error, size_t size) {
  return kioskcam_lc_guarded(error, size, [&] { return stop(handle, error, size); });
}
