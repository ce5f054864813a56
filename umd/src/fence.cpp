// Fence and the waits over several (npu/fence.h): poll(2) on the descriptors, and the status
// byte peeked with recv(MSG_PEEK).
#include "npu/fence.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

namespace npu {
namespace {

// Polls `fds` until `need` of them are readable or the deadline (absolute CLOCK_MONOTONIC ns;
// 0 polls once, INT64_MAX never passes). 0, ETIMEDOUT or EBUSY, or poll's errno.
int poll_until(std::vector<pollfd>& fds, size_t need, int64_t deadline) {
  for (;;) {
    size_t ready = 0;
    for (pollfd& p : fds) {
      if (p.revents != 0) {
        ++ready;
        p.events = 0;  // done: not polled again
      }
    }
    if (ready >= need) return 0;
    const int64_t now = monotonic_ns();
    if (deadline == 0) {
      if (::poll(fds.data(), fds.size(), 0) < 0 && errno != EINTR) return errno;
      size_t after = 0;
      for (const pollfd& p : fds) after += p.revents != 0 ? 1 : 0;
      return after >= need ? 0 : EBUSY;
    }
    if (now >= deadline) return ETIMEDOUT;
    timespec left{};
    const bool forever = deadline == std::numeric_limits<int64_t>::max();
    left.tv_sec = (deadline - now) / 1'000'000'000;
    left.tv_nsec = (deadline - now) % 1'000'000'000;
    std::vector<pollfd> waiting;
    for (const pollfd& p : fds) {
      if (p.events != 0) waiting.push_back(p);
    }
    const int r = ::ppoll(waiting.data(), waiting.size(), forever ? nullptr : &left, nullptr);
    if (r < 0 && errno != EINTR) return errno;
    size_t k = 0;
    for (pollfd& p : fds) {
      if (p.events != 0) p.revents = waiting[k++].revents;
    }
  }
}

int64_t deadline_of(std::chrono::nanoseconds timeout) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  if (timeout == Job::kForever) return max;
  if (timeout.count() <= 0) return 0;
  const int64_t now = monotonic_ns();
  return timeout.count() > max - now ? max : now + timeout.count();
}

std::vector<pollfd> poll_set(std::span<const Fence> fences) {
  std::vector<pollfd> out;
  for (const Fence& f : fences) out.push_back({f.fd(), POLLIN, 0});
  return out;
}

bool any_empty(std::span<const Fence> fences) {
  for (const Fence& f : fences) {
    if (!f) return true;
  }
  return false;
}

Error wait_error(int err, std::string_view who) {
  return make_error(err, fmt::format("{}: {}", who,
                                     err == EBUSY       ? "not signalled yet"
                                     : err == ETIMEDOUT ? "deadline passed before it signalled"
                                                        : std::strerror(err)));
}

}  // namespace

Expected<Fence> Fence::dup() const {
  if (!fd_) return make_error(EBADF, "fence dup: empty fence");
  const int fd = ::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return make_error(errno, fmt::format("fence dup: {}", std::strerror(errno)));
  return Fence(UniqueFd(fd));
}

bool Fence::signalled() const {
  if (!fd_) return false;
  pollfd p{fd_.get(), POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP)) != 0;
}

Expected<JobStatus> Fence::status() const {
  if (!fd_) return make_error(EBADF, "fence status: empty fence");
  uint8_t byte = 0;
  const ssize_t n = ::recv(fd_.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 1) return static_cast<JobStatus>(byte);
  if (n == 0) {
    // Signalled, but someone read the status byte: the fence only says the job is done.
    return make_error(ENODATA,
                      "fence status: the fence's status byte was read by another "
                      "reader (the job has retired)");
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK) return wait_error(EBUSY, "fence status");
  return make_error(errno, fmt::format("fence status: fd {}: {}", fd_.get(), std::strerror(errno)));
}

Expected<JobStatus> Fence::wait(std::chrono::nanoseconds timeout) const {
  if (!fd_) return make_error(EBADF, "fence wait: empty fence");
  std::vector<pollfd> fds{{fd_.get(), POLLIN, 0}};
  if (const int err = poll_until(fds, 1, deadline_of(timeout)); err != 0) {
    return wait_error(err, fmt::format("fence wait: fd {}", fd_.get()));
  }
  return status();
}

Expected<size_t> wait_any(std::span<const Fence> fences, std::chrono::nanoseconds timeout) {
  if (fences.empty()) return make_error(EINVAL, "wait any: no fences");
  if (any_empty(fences)) return make_error(EBADF, "wait any: an empty fence");
  std::vector<pollfd> fds = poll_set(fences);
  if (const int err = poll_until(fds, 1, deadline_of(timeout)); err != 0) {
    return wait_error(err, fmt::format("wait any: {} fences", fences.size()));
  }
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents != 0) return i;
  }
  return make_error(EIO, "wait any: poll reported nothing");
}

Expected<void> wait_all(std::span<const Fence> fences, std::chrono::nanoseconds timeout) {
  if (fences.empty()) return ok();
  if (any_empty(fences)) return make_error(EBADF, "wait all: an empty fence");
  std::vector<pollfd> fds = poll_set(fences);
  if (const int err = poll_until(fds, fds.size(), deadline_of(timeout)); err != 0) {
    return wait_error(err, fmt::format("wait all: {} fences", fences.size()));
  }
  return ok();
}

}  // namespace npu
