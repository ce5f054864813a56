/* A plugin the shim tests dlopen(): it reaches the device node from a library loaded after
 * start-up (its calls bind to the preloaded shim like the program's own). */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "npu_accel.h"

/* The node's API version, or -errno. */
int npu_plugin_api_version(const char* node) {
  const int fd = open(node, O_RDWR | O_CLOEXEC);
  if (fd < 0) return -errno;
  struct drm_npu_get_param g = {.param = DRM_NPU_PARAM_API_VERSION};
  const int r = ioctl(fd, DRM_IOCTL_NPU_GET_PARAM, &g);
  const int err = errno;
  close(fd);
  return r == 0 ? (int)g.value : -err;
}
