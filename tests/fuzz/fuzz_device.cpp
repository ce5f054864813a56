// libFuzzer target: the device model and the engine kernels (emu/device, emu/kernels) on any
// command buffer, through the mock kernel driver. Each input is submitted as it is — first
// validated (an accepted buffer runs on the emulator's kernels, not only the reference
// interpreter fuzz_cmdbuf uses), then with SKIP_VALIDATION, where the device parses each
// command itself and must fault cleanly on anything malformed; a job that hangs (a semaphore
// wait nobody signals) is ended by the watchdog, set to 20 ms. Two buffers are mapped at the
// addresses the examples use (0x100000000 and 0x100100000, 64 KiB each).
// What must hold: no crash, no sanitizer report, every job ends (ok, error or aborted).
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>

#include "fuzz_input.h"
#include "npu/emu/kmd.h"
#include "npu_accel.h"

namespace {

using npu::fuzz::now_ns;

struct Session {
  npu::emu::Kmd kmd;
  int fd = -1;
  uint32_t in = 0, out = 0;

  static npu::isa::DeviceConfig config() {
    npu::isa::DeviceConfig cfg;
    cfg.watchdog_ms = 20;
    return cfg;
  }
  Session() : kmd(config()) {
    fd = kmd.open();
    in = bo(0x100000000ull);
    out = bo(0x100100000ull);
  }
  uint32_t bo(uint64_t va) {
    drm_npu_bo_create c{};
    c.size = 64 * 1024;
    c.flags = DRM_NPU_BO_FIXED_VA;
    c.device_addr = va;
    return kmd.ioctl(fd, DRM_IOCTL_NPU_BO_CREATE, &c) == 0 ? c.handle : 0;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Session* s = new Session;  // lives until exit, reused by every input
  if (size == 0 || size > (1u << 20)) return 0;
  npu::emu::Kmd& kmd = s->kmd;
  drm_npu_bo_create c{};
  c.size = size;
  if (kmd.ioctl(s->fd, DRM_IOCTL_NPU_BO_CREATE, &c) != 0) return 0;
  drm_npu_bo_info info{};
  info.handle = c.handle;
  if (kmd.ioctl(s->fd, DRM_IOCTL_NPU_BO_INFO, &info) == 0) {
    void* p = kmd.mmap(nullptr, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd,
                       static_cast<off_t>(info.mmap_offset));
    if (p != MAP_FAILED) {
      std::memcpy(p, data, size);
      kmd.munmap(p, info.size);
    }
  }
  const drm_npu_bo_ref refs[] = {{c.handle, DRM_NPU_ACCESS_READ},
                                 {s->in, DRM_NPU_ACCESS_READ | DRM_NPU_ACCESS_WRITE},
                                 {s->out, DRM_NPU_ACCESS_READ | DRM_NPU_ACCESS_WRITE}};
  for (uint32_t flags : {0u, static_cast<uint32_t>(DRM_NPU_SUBMIT_SKIP_VALIDATION)}) {
    drm_npu_ctx_create cc{};  // a fresh context: a fault bans the last one
    if (kmd.ioctl(s->fd, DRM_IOCTL_NPU_CTX_CREATE, &cc) != 0) break;
    drm_npu_submit sub{};
    sub.ctx_id = cc.ctx_id;
    sub.flags = flags;
    sub.cmd_handle = c.handle;
    sub.bo_count = 3;
    sub.cmd_size = size;
    sub.bos = reinterpret_cast<uintptr_t>(refs);
    if (kmd.ioctl(s->fd, DRM_IOCTL_NPU_SUBMIT, &sub) == 0) {
      drm_npu_wait w{};
      w.ctx_id = cc.ctx_id;
      w.seqno = sub.seqno;
      w.timeout_ns = now_ns() + 10'000'000'000ll;  // the watchdog ends it long before
      (void)kmd.ioctl(s->fd, DRM_IOCTL_NPU_WAIT, &w);
    }
    drm_npu_ctx_destroy d{cc.ctx_id, 0};
    (void)kmd.ioctl(s->fd, DRM_IOCTL_NPU_CTX_DESTROY, &d);
  }
  drm_npu_bo_close bc{c.handle, 0};
  (void)kmd.ioctl(s->fd, DRM_IOCTL_NPU_BO_CLOSE, &bc);
  return 0;
}
