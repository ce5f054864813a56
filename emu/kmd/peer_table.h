// PeerTable<T>: driver objects handed to user space as a descriptor — one end of a UNIX
// socket pair whose other end the driver keeps — the way the kernel hands out a sync_file or
// a dma-buf. The user's end is a real descriptor: it can be dup()ed, polled, passed over a
// UNIX socket to another process (SCM_RIGHTS) and closed, and it names the object for as
// long as any copy of it is open anywhere: the driver finds the object behind a descriptor
// by the socket's identity (SO_COOKIE, unique for the life of the host), which no process can
// forge without holding the socket. Fences (sync_fence.h) and exported BOs use it.
//
// An entry lives while any copy of the user's end is open (the driver sees the hang-up on its
// own end) and the object agrees it may go (`T::may_release()`: a fence not yet signalled
// still needs its end to signal through); sweep() drops the others, and runs by itself as
// entries are added.
//
// Threading: every method may be called from any thread (one mutex; no blocking call under
// it). Lifetime: owned by the driver; destroying it closes every kept end.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#ifndef SO_COOKIE
#define SO_COOKIE 57  // Linux 4.12; older libc headers lack the name
#endif

namespace npu::emu::kmd {

/// SO_COOKIE of the socket `fd`: 0 when `fd` is not a socket (or not open).
inline uint64_t socket_cookie(int fd) {
  uint64_t cookie = 0;
  socklen_t len = sizeof(cookie);
  if (::getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len) != 0) return 0;
  return cookie;
}

template <typename T>
class PeerTable {
 public:
  PeerTable() = default;
  ~PeerTable() {
    for (auto& [cookie, e] : entries_) ::close(e.kernel_fd);
  }
  PeerTable(const PeerTable&) = delete;
  PeerTable& operator=(const PeerTable&) = delete;

  struct Handed {
    int user_fd = -1;    // the caller's new descriptor
    int kernel_fd = -1;  // the driver's end (owned by the table)
  };

  /// Makes a socket pair for `obj`: the user's end (close-on-exec when asked) and the kept
  /// end. A negative errno when no descriptor is left.
  int hand_out(std::shared_ptr<T> obj, bool cloexec, Handed& out) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -errno;
    if (!cloexec && ::fcntl(sv[0], F_SETFD, 0) != 0) {
      const int err = errno;
      ::close(sv[0]);
      ::close(sv[1]);
      return -err;
    }
    const uint64_t cookie = socket_cookie(sv[0]);
    std::lock_guard lk(mu_);
    if (entries_.size() >= 2 * swept_size_ + 64) sweep_locked();
    entries_[cookie] = Entry{sv[1], std::move(obj)};
    out = {sv[0], sv[1]};
    return 0;
  }

  /// The object behind descriptor `fd` (any copy of a user end), or nullptr with `err` set:
  /// EBADF when `fd` is not open, EINVAL when it is no such object.
  std::shared_ptr<T> find(int fd, int& err) {
    if (fd < 0 || ::fcntl(fd, F_GETFD) < 0) {
      err = EBADF;
      return nullptr;
    }
    const uint64_t cookie = socket_cookie(fd);
    std::lock_guard lk(mu_);
    const auto it = cookie == 0 ? entries_.end() : entries_.find(cookie);
    if (it == entries_.end()) {
      err = EINVAL;
      return nullptr;
    }
    return it->second.obj;
  }

  /// Drops the entries whose user ends are all closed and whose objects may go.
  void sweep() {
    std::lock_guard lk(mu_);
    sweep_locked();
  }

  size_t size() {
    std::lock_guard lk(mu_);
    return entries_.size();
  }

 private:
  struct Entry {
    int kernel_fd;
    std::shared_ptr<T> obj;
  };

  void sweep_locked() {
    std::vector<pollfd> fds;
    std::vector<uint64_t> cookies;
    for (const auto& [cookie, e] : entries_) {
      if (!e.obj->may_release()) continue;
      fds.push_back({e.kernel_fd, 0, 0});
      cookies.push_back(cookie);
    }
    if (!fds.empty() && ::poll(fds.data(), fds.size(), 0) > 0) {
      for (size_t i = 0; i < fds.size(); ++i) {
        if ((fds[i].revents & POLLHUP) == 0) continue;
        ::close(fds[i].fd);
        entries_.erase(cookies[i]);
      }
    }
    swept_size_ = entries_.size();
  }

  std::mutex mu_;
  std::unordered_map<uint64_t, Entry> entries_;
  size_t swept_size_ = 0;
};

}  // namespace npu::emu::kmd
