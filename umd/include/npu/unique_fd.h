// UniqueFd: an owned file descriptor, closed when the owner goes (-1: none). Move-only. The
// kernel hands libnpu descriptors (fences, exported buffers, event descriptors, the daemon's
// memfds) that their holder must close exactly once.
//
// Threading: as an int. Lifetime: the descriptor lives as long as the UniqueFd holds it.
#pragma once

#include <utility>

namespace npu {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  /// Gives the descriptor up (the caller closes it).
  int release() { return std::exchange(fd_, -1); }
  /// Closes the descriptor held, if any, and holds `fd`.
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

}  // namespace npu
