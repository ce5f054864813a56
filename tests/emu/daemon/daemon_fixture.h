// Helpers for the daemon tests: an npu-daemon process started by the test (fork/exec of the
// built binary), a raw client of one connection with typed ioctl wrappers returning errno, the
// jobs the tests run, and a bounded poll for state that changes asynchronously (a killed
// client's clean-up). No test asserts wall-clock time.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "npu/command_buffer.h"
#include "npu/isa/builder.h"
#include "npu/unix_kernel.h"
#include "npu_accel.h"
#include "relu_job.h"

namespace npu::daemon::test {

inline int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}
inline int64_t deadline_ms(int64_t ms) {
  return now_ns() + ms * 1'000'000;
}

/// Polls `pred` every 10 ms for up to `seconds`; true as soon as it holds.
inline bool eventually(const std::function<bool()>& pred, int seconds = 20) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

/// The built npu-daemon serving a fresh socket in a private directory; SIGTERM on stop().
class DaemonProcess {
 public:
  explicit DaemonProcess(std::vector<std::string> extra_args = {}) {
    char tmpl[] = "/tmp/npu-daemon-test-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    socket_ = dir_ + "/npu0.sock";
    start(std::move(extra_args));
  }
  ~DaemonProcess() {
    if (pid_ > 0) stop();
    ::unlink(socket_.c_str());
    ::rmdir(dir_.c_str());
  }

  /// fork/exec of npu-daemon; returns once the socket accepts (or the daemon exited).
  void start(std::vector<std::string> extra_args = {}) {
    pid_ = ::fork();
    if (pid_ == 0) {
      // Dies with the test: a test killed by ctest's timeout must not leave a daemon holding
      // ctest's output pipe (ctest waits for it to close).
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      std::vector<std::string> args = {NPU_DAEMON_EXE, "--socket", socket_};
      args.insert(args.end(), extra_args.begin(), extra_args.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(NPU_DAEMON_EXE, argv.data());
      ::_exit(127);
    }
    eventually([&] {
      UnixKernel k(socket_);
      const int fd = k.open(socket_);
      if (fd >= 0) k.close(fd);
      int status = 0;
      return fd >= 0 || ::waitpid(pid_, &status, WNOHANG) == pid_;
    });
  }
  /// SIGTERM and the exit status (as waitpid gives it).
  int stop() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

  const std::string& socket() const { return socket_; }
  std::string device() const { return "unix:" + socket_; }
  pid_t pid() const { return pid_; }

 private:
  std::string dir_, socket_;
  pid_t pid_ = -1;
};

struct BoHandle {
  uint32_t handle = 0;
  uint64_t va = 0;
  uint64_t size = 0;
  uint64_t mmap_offset = 0;
};

inline drm_npu_bo_ref ref(const BoHandle& b, uint32_t access) {
  return {b.handle, access};
}
inline constexpr uint32_t kR = DRM_NPU_ACCESS_READ;
inline constexpr uint32_t kW = DRM_NPU_ACCESS_WRITE;

/// One connection to a daemon through libnpu's UnixKernel, with ioctl wrappers returning errno.
class RawClient {
 public:
  explicit RawClient(const std::string& socket) : k_(socket), fd_(k_.open(socket)) {}
  ~RawClient() {
    for (auto& [p, len] : maps_) k_.munmap(p, len);
    if (fd_ >= 0) k_.close(fd_);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  int fd() const { return fd_; }
  UnixKernel& kernel() { return k_; }

  int io(unsigned long request, void* arg) { return k_.ioctl(fd_, request, arg) == 0 ? 0 : errno; }

  uint32_t ctx() {
    drm_npu_ctx_create c{};
    c.priority = DRM_NPU_PRIORITY_NORMAL;
    EXPECT_EQ(io(DRM_IOCTL_NPU_CTX_CREATE, &c), 0);
    return c.ctx_id;
  }
  BoHandle bo(uint64_t size) {
    drm_npu_bo_create c{};
    c.size = size;
    EXPECT_EQ(io(DRM_IOCTL_NPU_BO_CREATE, &c), 0);
    drm_npu_bo_info i{};
    i.handle = c.handle;
    EXPECT_EQ(io(DRM_IOCTL_NPU_BO_INFO, &i), 0);
    return {c.handle, c.device_addr, i.size, i.mmap_offset};
  }
  std::byte* map(const BoHandle& b) {
    void* p = k_.mmap(nullptr, b.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                      static_cast<off_t>(b.mmap_offset));
    EXPECT_NE(p, MAP_FAILED) << std::strerror(errno);
    if (p == MAP_FAILED) return nullptr;
    maps_.push_back({p, b.size});
    return static_cast<std::byte*>(p);
  }
  BoHandle upload(std::span<const std::byte> bytes) {
    BoHandle b = bo(bytes.size());
    std::memcpy(map(b), bytes.data(), bytes.size());
    return b;
  }
  int submit(uint32_t ctx, const BoHandle& cmd, uint64_t cmd_size, std::vector<drm_npu_bo_ref> refs,
             uint32_t flags = 0, uint64_t* seqno = nullptr) {
    drm_npu_submit s{};
    s.ctx_id = ctx;
    s.flags = flags;
    s.cmd_handle = cmd.handle;
    s.bo_count = static_cast<uint32_t>(refs.size());
    s.cmd_size = cmd_size;
    s.bos = reinterpret_cast<uintptr_t>(refs.data());
    const int r = io(DRM_IOCTL_NPU_SUBMIT, &s);
    if (r == 0 && seqno != nullptr) *seqno = s.seqno;
    return r;
  }
  int wait(uint32_t ctx, uint64_t seqno, int64_t deadline, drm_npu_wait* out = nullptr) {
    drm_npu_wait w{};
    w.ctx_id = ctx;
    w.seqno = seqno;
    w.timeout_ns = deadline;
    const int r = io(DRM_IOCTL_NPU_WAIT, &w);
    if (out != nullptr) *out = w;
    return r;
  }
  /// The daemon's STATUS (fails the test when it cannot be read).
  DaemonStatus status() {
    auto s = k_.status(fd_);
    EXPECT_TRUE(s) << s.error().message;
    return s ? *s : DaemonStatus{};
  }
  uint32_t id() { return k_.client_id(fd_); }

 private:
  UnixKernel k_;
  int fd_;
  std::vector<std::pair<void*, size_t>> maps_;
};

/// The STATUS line of client `pid`, if it is connected.
inline std::optional<npu_daemon_client> client_of(const DaemonStatus& st, pid_t pid) {
  for (const auto& c : st.clients) {
    if (c.pid == static_cast<uint32_t>(pid)) return c;
  }
  return std::nullopt;
}

/// DRAM src -> SRAM -> DRAM dst, `n` bytes.
inline std::vector<std::byte> copy_job(uint64_t src, uint64_t dst, uint32_t n) {
  isa::CommandBufferBuilder b;
  b.dma_load({.dram = src, .sram = 0, .elem_size = 1, .size = {n, 1, 1}});
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 0);
  b.dma_store({.dram = dst, .sram = 0, .elem_size = 1, .size = {n, 1, 1}});
  return b.finish();
}

/// A job only the watchdog ends (submit with DRM_NPU_SUBMIT_SKIP_VALIDATION).
inline std::vector<std::byte> hung_job() {
  isa::CommandBufferBuilder b;
  b.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  return b.finish();
}

using npu::record_relu;  // tests/umd/cts/relu_job.h

}  // namespace npu::daemon::test
