// The core DRM ioctls the driver answers (uapi/npu_ioctls.def, NPU_CORE_IOCTL rows), as the
// kernel's DRM core answers them on an accel node whose driver has no GEM PRIME, sync objects
// or modesetting: VERSION (what drmGetVersion() reads) and GET_CAP. Every other core number
// is EINVAL in the dispatcher, as drm_ioctl() does for a core ioctl without a function.
#include <cstring>
#include <string_view>

#include "driver.h"

namespace npu::emu::kmd {
namespace {

constexpr std::string_view kDate = "20261128";
constexpr std::string_view kDesc = "NPU emulator (threaded device model)";

// drm_copy_field(): copies at most *len bytes (no NUL) and reports the full length in *len; a
// null buffer copies nothing and is not an error.
int copy_field(const UserAccess& uaccess, char* user_buf, __kernel_size_t* len,
               std::string_view value) {
  const size_t n = std::min<size_t>(value.size(), *len);
  *len = value.size();
  if (n == 0 || user_buf == nullptr) return 0;
  return uaccess.copy_to(reinterpret_cast<uintptr_t>(user_buf), value.data(), n);
}

}  // namespace

int core_version(Driver& drv, File& /*file*/, void* data) {
  auto& v = *static_cast<drm_version*>(data);
  v.version_major = DRM_NPU_API_VERSION_MAJOR;
  v.version_minor = DRM_NPU_API_VERSION_MINOR;
  v.version_patchlevel = 0;
  if (const int r = copy_field(drv.uaccess, v.name, &v.name_len, DRM_NPU_DRIVER_NAME); r < 0) {
    return r;
  }
  if (const int r = copy_field(drv.uaccess, v.date, &v.date_len, kDate); r < 0) return r;
  return copy_field(drv.uaccess, v.desc, &v.desc_len, kDesc);
}

int core_get_cap(Driver& /*drv*/, File& /*file*/, void* data) {
  auto& c = *static_cast<drm_get_cap*>(data);
  c.value = 0;
  switch (c.capability) {
    case DRM_CAP_TIMESTAMP_MONOTONIC:
      c.value = 1;  // every ABI time is CLOCK_MONOTONIC
      return 0;
    case DRM_CAP_PRIME:
      // Difference with the kernel: accel drivers with GEM report import and export here;
      // this driver shares buffers through its own ioctls, not the core PRIME ones.
      return 0;
    case DRM_CAP_SYNCOBJ:
    case DRM_CAP_SYNCOBJ_TIMELINE:
      return 0;  // no DRM sync objects
    default:
      return -EOPNOTSUPP;  // the remaining caps are for modesetting drivers
  }
}

}  // namespace npu::emu::kmd
