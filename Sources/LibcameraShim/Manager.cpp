// The camera manager and what each camera offers: the probe's half of the shim.
#include <atomic>
#include <csignal>
#include <cstring>

#include <pthread.h>

#include "Shim.h"

using namespace libcamera;

namespace {
// libcamera aborts the process (a Fatal log) when a second CameraManager is made while one exists.
std::atomic<bool> managerExists{false};

void copy(char *target, size_t size, const std::string &text) { std::snprintf(target, size, "%s", text.c_str()); }

// The formats and sizes a viewfinder stream can take: what the preview, and stage 2's stills, stream.
void describeFormats(Camera &camera, kioskcam_lc_camera_info *info) {
  std::vector<StreamRole> roles{StreamRole::Viewfinder};
  std::unique_ptr<CameraConfiguration> configuration = camera.generateConfiguration(roles);
  if (!configuration || configuration->empty()) return;
  const StreamFormats &formats = configuration->at(0).formats();
  for (const PixelFormat &format : formats.pixelformats()) {
    if (info->format_count == KIOSKCAM_LC_MAX_FORMATS) break;
    kioskcam_lc_format &entry = info->formats[info->format_count++];
    entry.fourcc = format.fourcc();
    copy(entry.name, sizeof entry.name, format.toString());
    std::vector<Size> sizes = formats.sizes(format);
    if (sizes.empty()) {
      // Only a range (some pipelines scale to any size): its two ends, as the V4L2 probe reports a stepwise one.
      SizeRange range = formats.range(format);
      sizes = {range.min, range.max};
      entry.range = 1;
    }
    for (const Size &size : sizes) {
      if (entry.size_count == KIOSKCAM_LC_MAX_SIZES) break;
      entry.sizes[entry.size_count++] = {size.width, size.height};
    }
  }
}
}  // namespace

extern "C" int kioskcam_lc_abi(void) { return KIOSKCAM_LC_ABI; }

extern "C" const char *kioskcam_lc_version(void) { return CameraManager::version().c_str(); }

extern "C" int kioskcam_lc_manager_create(kioskcam_lc_manager **result, char *error, size_t size) {
  return kioskcam_lc_guarded(error, size, [&] {
    bool expected = false;
    if (!managerExists.compare_exchange_strong(expected, true))
      return kioskcam_lc_fail(error, size, -EBUSY, "libcamera: one camera manager a process, and one exists");
    auto handle = std::make_unique<kioskcam_lc_manager>();
    handle->manager = std::make_unique<CameraManager>();
    // libcamera's threads (the manager's, and every one it starts) inherit this mask and so never take the
    // process's signals: kioskcam reads SIGTERM from a signalfd, which works only while no thread leaves it
    // unblocked; one that did would be killed by it, and the service with it, without a clean stop.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    int status = handle->manager->start();
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (status < 0) {
      handle.reset();
      managerExists = false;
      return kioskcam_lc_fail(error, size, status, std::string("libcamera: camera manager start: ") + std::strerror(-status));
    }
    *result = handle.release();
    return 0;
  });
}

extern "C" void kioskcam_lc_manager_destroy(kioskcam_lc_manager *handle) {
  if (!handle) return;
  handle->manager->stop();
  delete handle;
  managerExists = false;
}

extern "C" int kioskcam_lc_camera_count(kioskcam_lc_manager *handle) {
  return static_cast<int>(handle->manager->cameras().size());
}

extern "C" int kioskcam_lc_camera_describe(kioskcam_lc_manager *handle, uint32_t position,
                                           kioskcam_lc_camera_info *info, char *error, size_t size) {
  return kioskcam_lc_guarded(error, size, [&] {
    std::vector<std::shared_ptr<Camera>> cameras = handle->manager->cameras();
    if (position >= cameras.size())
      return kioskcam_lc_fail(error, size, -ENODEV, "libcamera: camera " + std::to_string(position) + " is gone");
    Camera &camera = *cameras[position];
    std::memset(info, 0, sizeof *info);
    copy(info->id, sizeof info->id, camera.id());
    const ControlList &properties = camera.properties();
    copy(info->model, sizeof info->model, properties.get(properties::Model).value_or(""));
    info->location = properties.get(properties::Location).value_or(-1);
    const ControlInfoMap &controls = camera.controls();
    // find, not count: a pipeline's map is made with libcamera's whole list of controls as its id map, and
    // count(id) asks only that list (so every camera "had" every control; the board's webcam has none).
    info->has_scaler_crop = controls.find(controls::ScalerCrop.id()) != controls.end();
    info->has_af_trigger = controls.find(controls::AfTrigger.id()) != controls.end();
    describeFormats(camera, info);
    return 0;
  });
}
