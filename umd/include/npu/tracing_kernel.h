// TracingKernel: a KernelInterface decorator that logs every call it forwards.
//
// Semantics: each ioctl becomes one line naming the request, its key input fields, the
// result (0, or -1 with the errno name and text), the key output fields and the duration,
// e.g. "ioctl fd 5 SUBMIT ctx=1 flags=0x0 cmd_handle=3 cmd_size=288 bos=3 -> 0 seqno=1
// (14.2 us)". open/close/mmap/munmap are logged the same way. errno is preserved across the
// logging, so the caller sees exactly what the inner kernel returned.
// Lines go to the sink given at construction, by default to the spdlog logger "npu.ioctl"
// at debug level (the logger is created with level debug when it does not exist yet).
// open_kernel() adds this decorator when NPU_TRACE_IOCTL=1 or set_ioctl_tracing(true).
//
// Threading: as thread-safe as the inner kernel and the sink.
// Lifetime: holds the inner kernel.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "npu/kernel.h"

namespace npu {

class TracingKernel final : public KernelInterface {
 public:
  using Sink = std::function<void(std::string_view line)>;

  explicit TracingKernel(std::shared_ptr<KernelInterface> inner, Sink sink = {});

  int open(std::string_view path) override;
  int close(int fd) override;
  int ioctl(int fd, unsigned long request, void* arg) override;
  void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override;
  int munmap(void* addr, size_t length) override;

  KernelInterface& inner() { return *inner_; }

 private:
  void emit(const std::string& line);

  std::shared_ptr<KernelInterface> inner_;
  Sink sink_;
};

/// The key fields of an ioctl argument: the inputs (`after` false) or the outputs (true),
/// e.g. "ctx=1 seqno=4 timeout_ns=..." / "status=ERROR fault=mmu@dma_in cmd 2 addr 0x...".
std::string describe_ioctl(unsigned long request, const void* arg, bool after);

}  // namespace npu
