// libFuzzer target: the mock kernel driver's ioctl layer (docs/uapi.md). The input is a
// program of calls — BO_CREATE/INFO/CLOSE, CTX_CREATE/DESTROY, SUBMIT (validated or not, of
// command bytes taken from the input; with in-fences and out-fences), WAIT, BO_WAIT,
// FENCE_WAIT, BO_EXPORT/IMPORT, CTX_EVENTS, QUERY, GET_PARAM, VERSION, GET_CAP,
// mmap/munmap, close and reopen, and ioctl numbers the driver does not know — with every field
// taken from the input, on two open files of one driver; and any request with wild pointers on
// a driver that checks user pointers (the preload shim's). Pointers in the arguments point at real
// memory (the driver, like any in-process library, trusts a non-null pointer); sizes and counts are
// fuzzed within it. What must hold: no crash, no sanitizer report, every call returns 0 or an
// errno.
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <vector>

#include "fuzz_input.h"
#include "npu/emu/kmd.h"
#include "npu_accel.h"
#include "npu_isa.h"

namespace {

using npu::fuzz::now_ns;
using npu::fuzz::Reader;

npu::emu::Kmd& driver() {
  static npu::emu::Kmd* kmd = [] {
    npu::isa::DeviceConfig cfg;
    cfg.watchdog_ms = 20;           // unvalidated jobs that hang are reset quickly
    return new npu::emu::Kmd(cfg);  // lives until exit: jobs of earlier inputs may still run
  }();
  return *kmd;
}

npu::emu::Kmd& checked_driver() {
  static npu::emu::Kmd* kmd = [] {
    npu::isa::DeviceConfig cfg;
    cfg.watchdog_ms = 20;
    return new npu::emu::Kmd(cfg, {.checked_user_access = true});  // lives until exit
  }();
  return *kmd;
}

// A request of uapi/npu_ioctls.def.
bool known(unsigned long request) {
  switch (request) {
#define NPU_IOCTL(NAME, name, type) case DRM_IOCTL_NPU_##NAME:
#define NPU_CORE_IOCTL(NAME, name, type) case DRM_IOCTL_##NAME:
#include "npu_ioctls.def"
    return true;
    default:
      return false;
  }
}

struct FileState {
  int fd = -1;
  std::vector<uint32_t> handles{0};  // 0 and whatever BO_CREATE returned
  std::vector<uint32_t> ctxs{0};
  std::vector<uint64_t> seqnos{0};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::emu::Kmd& kmd = driver();
  Reader in(data, size);
  std::array<FileState, 2> files;
  for (auto& f : files) f.fd = kmd.open();
  // Scratch memory every pointer argument points into.
  static std::vector<std::byte> scratch(DRM_NPU_MAX_BO_REFS * sizeof(drm_npu_bo_ref) + 65536);
  std::vector<std::pair<void*, size_t>> maps;
  std::vector<int32_t> fences;  // descriptors the driver handed out (fences, exports, events)
  for (int step = 0; step < 64 && !in.done(); ++step) {
    FileState& f = files[in.get<uint8_t>() & 1];
    auto pick = [&](const std::vector<uint32_t>& v) { return v[in.get<uint8_t>() % v.size()]; };
    switch (in.get<uint8_t>() % 18) {
      case 0: {  // BO_CREATE
        drm_npu_bo_create c{};
        c.size = in.get<uint32_t>() % (1u << 20);
        c.flags = in.get<uint8_t>() % 8;
        c.device_addr = in.get<uint8_t>() & 1 ? 0x100000000ull + (in.get<uint16_t>() << 16)
                                              : in.get<uint64_t>();
        if (kmd.ioctl(f.fd, DRM_IOCTL_NPU_BO_CREATE, &c) == 0) f.handles.push_back(c.handle);
        break;
      }
      case 1: {  // BO_INFO, then maybe mmap and write the input's bytes into the BO
        drm_npu_bo_info i{};
        i.handle = pick(f.handles);
        if (kmd.ioctl(f.fd, DRM_IOCTL_NPU_BO_INFO, &i) != 0) break;
        const size_t len = in.get<uint8_t>() & 1 ? i.size : in.get<uint32_t>() % (2 * i.size + 1);
        void* p = kmd.mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, f.fd,
                           static_cast<off_t>(i.mmap_offset + (in.get<uint8_t>() & 1 ? 4096 : 0)));
        if (p == MAP_FAILED) break;
        const auto bytes = in.bytes(std::min<size_t>(len, 4096));
        if (!bytes.empty()) std::memcpy(p, bytes.data(), std::min(bytes.size(), len));
        maps.emplace_back(p, len);
        break;
      }
      case 2: {  // BO_CLOSE
        drm_npu_bo_close c{};
        c.handle = pick(f.handles);
        c.pad = in.get<uint8_t>() == 0xff ? 1 : 0;
        (void)kmd.ioctl(f.fd, DRM_IOCTL_NPU_BO_CLOSE, &c);
        break;
      }
      case 3: {  // CTX_CREATE
        drm_npu_ctx_create c{};
        c.priority = in.get<uint8_t>() % 6;
        c.flags = in.get<uint8_t>() == 0xff ? 1 : 0;
        if (kmd.ioctl(f.fd, DRM_IOCTL_NPU_CTX_CREATE, &c) == 0) f.ctxs.push_back(c.ctx_id);
        break;
      }
      case 4: {  // CTX_DESTROY
        drm_npu_ctx_destroy d{};
        d.ctx_id = pick(f.ctxs);
        (void)kmd.ioctl(f.fd, DRM_IOCTL_NPU_CTX_DESTROY, &d);
        break;
      }
      case 5: {  // SUBMIT: a command BO holding bytes of the input, refs from the file's BOs
        std::vector<std::byte> cmd = in.bytes(2048);
        if (in.get<uint8_t>() & 1 && cmd.size() >= sizeof(npu_cmdbuf_header)) {
          npu_cmdbuf_header h{};  // a plausible header, so the commands themselves get tested
          h.magic = NPU_ISA_MAGIC;
          h.version_major = NPU_ISA_VERSION_MAJOR;
          h.num_cmds = static_cast<uint32_t>((cmd.size() - sizeof(h)) / NPU_CMD_SIZE);
          h.size = static_cast<uint32_t>(sizeof(h) + h.num_cmds * NPU_CMD_SIZE);
          std::memcpy(cmd.data(), &h, sizeof(h));
          cmd.resize(h.size);
        }
        drm_npu_bo_create c{};
        c.size = cmd.empty() ? 1 : cmd.size();
        if (kmd.ioctl(f.fd, DRM_IOCTL_NPU_BO_CREATE, &c) != 0) break;
        drm_npu_bo_info i{};
        i.handle = c.handle;
        if (kmd.ioctl(f.fd, DRM_IOCTL_NPU_BO_INFO, &i) == 0) {
          void* p = kmd.mmap(nullptr, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, f.fd,
                             static_cast<off_t>(i.mmap_offset));
          if (p != MAP_FAILED) {
            if (!cmd.empty()) std::memcpy(p, cmd.data(), cmd.size());
            kmd.munmap(p, i.size);
          }
        }
        auto* refs = reinterpret_cast<drm_npu_bo_ref*>(scratch.data());
        const uint32_t count = in.get<uint8_t>() % 8;
        refs[0] = {c.handle, DRM_NPU_ACCESS_READ};
        for (uint32_t k = 1; k <= count; ++k) refs[k] = {pick(f.handles), in.get<uint8_t>() % 5u};
        drm_npu_submit s{};
        s.ctx_id = pick(f.ctxs);
        s.flags = in.get<uint8_t>() % 8;
        s.cmd_handle = in.get<uint8_t>() == 0xff ? pick(f.handles) : c.handle;
        s.bo_count =
            in.get<uint8_t>() == 0xff ? in.get<uint32_t>() % (DRM_NPU_MAX_BO_REFS + 2) : count + 1;
        for (uint32_t k = count + 1; k < s.bo_count; ++k) refs[k] = {};
        s.cmd_offset = in.get<uint8_t>() == 0xff ? in.get<uint64_t>() : 0;
        s.cmd_size = in.get<uint8_t>() == 0xff ? in.get<uint64_t>() : cmd.size();
        s.bos = in.get<uint8_t>() == 0xff ? 0 : reinterpret_cast<uintptr_t>(refs);
        if (kmd.ioctl(f.fd, DRM_IOCTL_NPU_SUBMIT, &s) == 0) f.seqnos.push_back(s.seqno);
        drm_npu_bo_close bc{c.handle, 0};
        (void)kmd.ioctl(f.fd, DRM_IOCTL_NPU_BO_CLOSE, &bc);  // the job keeps its memory
        break;
      }
      case 6: {  // WAIT: a poll, or a deadline a little ahead
        drm_npu_wait w{};
        w.ctx_id = pick(f.ctxs);
        w.seqno = f.seqnos[in.get<uint8_t>() % f.seqnos.size()] + in.get<uint8_t>() % 3;
        w.flags = in.get<uint8_t>() == 0xff ? 1 : 0;
        const uint8_t t = in.get<uint8_t>();
        w.timeout_ns = t == 0 ? 0 : t == 1 ? -1 : now_ns() + (t % 50) * 1'000'000ll;
        (void)kmd.ioctl(f.fd, DRM_IOCTL_NPU_WAIT, &w);
        break;
      }
      case 7: {  // QUERY: any type, size and arguments, data in the scratch buffer
        drm_npu_query q{};
        q.type = in.get<uint8_t>() % 9;
        q.size = in.get<uint16_t>() % 65536;
        q.arg0 = in.get<uint8_t>() & 1 ? pick(f.ctxs) : in.get<uint64_t>();
        q.arg1 = in.get<uint8_t>() & 1 ? f.seqnos[in.get<uint8_t>() % f.seqnos.size()]
                                       : in.get<uint64_t>();
        q.flags = in.get<uint8_t>() == 0xff ? 1 : 0;
        q.data = in.get<uint8_t>() == 0xff ? 0 : reinterpret_cast<uintptr_t>(scratch.data());
        (void)kmd.ioctl(f.fd, DRM_IOCTL_NPU_QUERY, &q);
        break;
      }
      case 8: {  // GET_PARAM
        drm_npu_get_param g{};
        g.param = in.get<uint8_t>() % (DRM_NPU_PARAM_COUNT + 3);
        g.index = in.get<uint8_t>() % 8;
        (void)kmd.ioctl(f.fd, DRM_IOCTL_NPU_GET_PARAM, &g);
        break;
      }
      case 9: {  // munmap one of the input's mappings
        if (maps.empty()) break;
        const size_t k = in.get<uint8_t>() % maps.size();
        kmd.munmap(maps[k].first, maps[k].second);
        maps.erase(maps.begin() + static_cast<ptrdiff_t>(k));
        break;
      }
      case 10: {  // an ioctl the driver does not know (a number, direction or size it lacks)
        // The known requests (uapi/npu_ioctls.def) take pointers and deadlines: they are
        // fuzzed field by field in their own cases.
        const unsigned long request = in.get<uint32_t>();
        if (!known(request)) (void)kmd.ioctl(f.fd, request, scratch.data());
        break;
      }
      case 12: {  // BO_WAIT: a poll, or a deadline a little ahead
        drm_npu_bo_wait w{};
        w.handle = pick(f.handles);
        w.flags = in.get<uint8_t>() == 0xff ? 1 : 0;
        const uint8_t t = in.get<uint8_t>();
        w.timeout_ns = t == 0 ? 0 : t == 1 ? -1 : now_ns() + (t % 20) * 1'000'000ll;
        (void)kmd.ioctl(f.fd, DRM_IOCTL_NPU_BO_WAIT, &w);
        break;
      }
      case 13: {  // VERSION with fuzzed lengths into the scratch buffer (or null), GET_CAP
        drm_version v{};
        auto field = [&](char*& ptr, __kernel_size_t& len) {
          len = in.get<uint16_t>() % 512;
          ptr = in.get<uint8_t>() == 0xff ? nullptr : reinterpret_cast<char*>(scratch.data());
        };
        field(v.name, v.name_len);
        field(v.date, v.date_len);
        field(v.desc, v.desc_len);
        (void)kmd.ioctl(f.fd, DRM_IOCTL_VERSION, &v);
        drm_get_cap cap{};
        cap.capability = in.get<uint8_t>() % 0x20;
        (void)kmd.ioctl(f.fd, DRM_IOCTL_GET_CAP, &cap);
        break;
      }
      case 14: {  // any request with a wild argument or embedded pointer, on a driver that
                  // checks user pointers (the preload shim's): EFAULT, never a crash
        std::array<std::byte, 128> arg{};
        const auto bytes = in.bytes(arg.size());
        if (!bytes.empty()) std::memcpy(arg.data(), bytes.data(), bytes.size());  // empty: null
        const unsigned long request =
            in.get<uint8_t>() & 1 ? DRM_IOCTL_NPU_SUBMIT : in.get<uint32_t>();
        void* where = in.get<uint8_t>() & 1 ? reinterpret_cast<void*>(in.get<uint64_t>() | 1)
                                            : static_cast<void*>(arg.data());
        if (request == DRM_IOCTL_NPU_WAIT || request == DRM_IOCTL_NPU_BO_WAIT) break;
        npu::emu::Kmd& checked = checked_driver();
        const int fd = checked.open();
        (void)checked.ioctl(fd, request, where);
        checked.close(fd);
        break;
      }
      case 15: {  // SUBMIT of an empty job with fences: out, and in from the fences so far or
                  // from any number (a bad descriptor must be EBADF/EINVAL, never a crash)
        static const std::vector<std::byte> empty = [] {
          npu_cmdbuf_header h{};
          h.magic = NPU_ISA_MAGIC;
          h.version_major = NPU_ISA_VERSION_MAJOR;
          h.num_cmds = 1;
          h.size = sizeof(h) + NPU_CMD_SIZE;
          std::vector<std::byte> b(h.size);
          std::memcpy(b.data(), &h, sizeof(h));
          auto* end = reinterpret_cast<npu_cmd_header*>(b.data() + sizeof(h));
          end->opcode = NPU_OP_END;
          end->engine = NPU_ENGINE_CP;
          return b;
        }();
        drm_npu_bo_create c{};
        c.size = 4096;
        if (kmd.ioctl(f.fd, DRM_IOCTL_NPU_BO_CREATE, &c) != 0) break;
        drm_npu_bo_info i{};
        i.handle = c.handle;
        if (kmd.ioctl(f.fd, DRM_IOCTL_NPU_BO_INFO, &i) == 0) {
          void* p = kmd.mmap(nullptr, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, f.fd,
                             static_cast<off_t>(i.mmap_offset));
          if (p != MAP_FAILED) {
            std::memcpy(p, empty.data(), empty.size());
            kmd.munmap(p, i.size);
          }
        }
        drm_npu_bo_ref r{c.handle, DRM_NPU_ACCESS_READ};
        std::array<int32_t, DRM_NPU_MAX_IN_FENCES + 2> in_fds{};
        const uint32_t n = in.get<uint8_t>() % (DRM_NPU_MAX_IN_FENCES + 2);
        for (uint32_t k = 0; k < n; ++k) {
          const uint8_t pick_fd = in.get<uint8_t>();
          in_fds[k] = !fences.empty() && pick_fd < 200 ? fences[pick_fd % fences.size()]
                                                       : static_cast<int32_t>(pick_fd) - 100;
        }
        drm_npu_submit s{};
        s.ctx_id = pick(f.ctxs);
        s.flags = (in.get<uint8_t>() & 1 ? DRM_NPU_SUBMIT_FENCE_OUT : 0u) |
                  (in.get<uint8_t>() == 0xff ? DRM_NPU_SUBMIT_RACECHECK : 0u);
        s.cmd_handle = c.handle;
        s.bo_count = 1;
        s.cmd_size = empty.size();
        s.bos = reinterpret_cast<uintptr_t>(&r);
        s.in_fences = in.get<uint8_t>() == 0xff ? 0 : reinterpret_cast<uintptr_t>(in_fds.data());
        s.in_fence_count = n;
        if (kmd.ioctl(f.fd, DRM_IOCTL_NPU_SUBMIT, &s) == 0) {
          f.seqnos.push_back(s.seqno);
          if (s.fence_fd >= 0) fences.push_back(s.fence_fd);
        }
        drm_npu_bo_close bc{c.handle, 0};
        (void)kmd.ioctl(f.fd, DRM_IOCTL_NPU_BO_CLOSE, &bc);
        break;
      }
      case 16: {  // FENCE_WAIT on the fences so far (and stray numbers)
        std::array<int32_t, 4> fds{};
        for (auto& fd : fds) {
          fd = !fences.empty() && in.get<uint8_t>() < 200
                   ? fences[in.get<uint8_t>() % fences.size()]
                   : in.get<uint8_t>() - 100;
        }
        drm_npu_fence_wait w{};
        w.fences = reinterpret_cast<uintptr_t>(fds.data());
        w.count = in.get<uint8_t>() % (fds.size() + 1);  // 0 is EINVAL
        w.flags = in.get<uint8_t>() % 3;
        const uint8_t t = in.get<uint8_t>();
        w.timeout_ns = t == 0 ? 0 : t == 1 ? -1 : now_ns() + (t % 20) * 1'000'000ll;
        (void)kmd.ioctl(f.fd, DRM_IOCTL_NPU_FENCE_WAIT, &w);
        break;
      }
      case 17: {  // BO_EXPORT, BO_IMPORT (into either file), CTX_EVENTS
        drm_npu_bo_export e{};
        e.handle = pick(f.handles);
        e.flags = in.get<uint8_t>() % 3;
        if (kmd.ioctl(f.fd, DRM_IOCTL_NPU_BO_EXPORT, &e) == 0) fences.push_back(e.fd);
        drm_npu_bo_import im{};
        const uint8_t which = in.get<uint8_t>();
        im.fd = !fences.empty() && which < 200 ? fences[which % fences.size()] : which - 100;
        im.flags = in.get<uint8_t>() % 4;
        im.device_addr =
            im.flags & DRM_NPU_BO_FIXED_VA ? 0x100000000ull + (in.get<uint16_t>() << 16) : 0;
        FileState& to = files[in.get<uint8_t>() & 1];
        if (kmd.ioctl(to.fd, DRM_IOCTL_NPU_BO_IMPORT, &im) == 0) to.handles.push_back(im.handle);
        drm_npu_ctx_events ev{};
        ev.ctx_id = pick(f.ctxs);
        ev.flags = in.get<uint8_t>() == 0xff ? 1 : 0;
        if (kmd.ioctl(f.fd, DRM_IOCTL_NPU_CTX_EVENTS, &ev) == 0) fences.push_back(ev.fd);
        break;
      }
      case 11: {  // close the file (its jobs aborted, BOs freed) and open a new one
        kmd.close(f.fd);
        f = FileState{};
        f.fd = kmd.open();
        break;
      }
    }
  }
  for (auto& [p, len] : maps) kmd.munmap(p, len);
  for (auto& f : files) kmd.close(f.fd);
  for (int32_t fd : fences) ::close(fd);
  return 0;
}
