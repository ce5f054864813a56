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
#include "npu/test/raw_file.h"
#include "npu/unix_kernel.h"
#include "npu_accel.h"
#include "relu_job.h"

namespace npu::daemon::test {

// The raw-ioctl helpers, deadlines and shared jobs (npu/test/raw_file.h).
using namespace npu::test;  // NOLINT(google-build-using-namespace)
using BoHandle = npu::test::RawBo;

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

/// One connection to a daemon through libnpu's UnixKernel, with ioctl wrappers returning errno.
class RawClient : public npu::test::RawFile<RawClient> {
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

  /// For RawFile::map: the mapping is undone when the client goes away.
  void* map_pages(uint64_t size, uint64_t offset) {
    void* p =
        k_.mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(offset));
    if (p != MAP_FAILED) maps_.push_back({p, size});
    return p;
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

using npu::record_relu;  // tests/umd/cts/relu_job.h

}  // namespace npu::daemon::test
