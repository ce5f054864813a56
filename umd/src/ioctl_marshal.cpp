// The generic ioctl marshalling of npu-daemon's wire (npu/ioctl_marshal.h).
#include "npu/ioctl_marshal.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "npu/user_memory.h"

namespace npu::wire {
namespace {

using Dir = UserBuffer::Dir;
using Kind = FdField::Kind;

// Bytes an IN buffer of the struct `arg` carries: 0 when its pointer is null or its count is
// above its max.
uint64_t in_bytes(const UserBuffer& b, const std::byte* arg) {
  const uint64_t n = b.len(arg);
  if (b.ptr(arg) == 0 || n > b.max) return 0;
  return n * b.elem_size;
}

// Elements of a descriptor array that travel: 0 when the pointer is null or the count is
// above the row's max (the driver then answers for the count or the pointer).
uint64_t array_len(const FdField& f, const std::byte* arg) {
  const uint64_t n = f.count(arg);
  return f.ptr(arg) == 0 || n > f.max ? 0 : n;
}

bool is_open(int fd) {
  return fd >= 0 && ::fcntl(fd, F_GETFD) >= 0;
}

// Elements the driver wrote to an OUT buffer: min(count before, count after), count before
// clamped to the row's max; none unless the call succeeded and the pointer was set.
uint64_t out_elems(const UserBuffer& b, const std::byte* before, const std::byte* after, bool ok) {
  if (!ok || b.ptr(before) == 0) return 0;
  return std::min({b.len(before), b.max, b.len(after)});
}

}  // namespace

Expected<IoctlRequest> pack_request(const IoctlInfo& info, const void* user_arg,
                                    uint32_t user_size) {
  IoctlRequest r;
  r.arg.assign(info.size, std::byte{0});
  if (copy_from_user(r.arg.data(), reinterpret_cast<uintptr_t>(user_arg), user_size) != 0) {
    return make_error(EFAULT, fmt::format("{}: argument not readable", info.name));
  }
  std::byte* arg = r.arg.data();
  for (const UserBuffer& b : info.buffers) {
    if (b.dir != Dir::kIn) continue;
    const uint64_t n = in_bytes(b, arg);
    if (n == 0) {
      if (b.ptr(arg) != 0 && b.len(arg) > b.max) b.set_ptr(arg, 0);
      continue;
    }
    const size_t at = r.extra.size();
    r.extra.resize(at + n);
    if (copy_from_user(r.extra.data() + at, b.ptr(arg), n) != 0) {
      r.extra.resize(at);
      b.set_ptr(arg, 0);  // the driver reports EFAULT where it reads it
    }
  }
  for (const FdField& f : info.fds) {
    if (f.kind == Kind::kIn) {
      if (is_open(f.fd(arg))) {
        r.fds.push_back(f.fd(arg));
      } else {
        f.set_fd(arg, -1);  // the driver answers EBADF where it looks at it
      }
    } else if (f.kind == Kind::kArray) {
      const uint64_t n = array_len(f, arg);
      std::vector<int32_t> list(n);
      if (n > 0 && copy_from_user(list.data(), f.ptr(arg), n * 4) != 0) {
        f.set_ptr(arg, 0);  // EFAULT where the driver reads it
        continue;
      }
      if (n == 0 && f.ptr(arg) != 0 && f.count(arg) > f.max) f.set_ptr(arg, 0);
      for (int32_t& fd : list) {
        if (is_open(fd)) {
          r.fds.push_back(fd);
        } else {
          fd = -1;
        }
      }
      const auto* bytes = reinterpret_cast<const std::byte*>(list.data());
      r.extra.insert(r.extra.end(), bytes, bytes + list.size() * 4);
    }
  }
  return r;
}

int unpack_reply(const IoctlInfo& info, void* user_arg, uint32_t user_size,
                 std::span<const std::byte> reply_arg, std::span<const std::byte> extra,
                 std::vector<UniqueFd>& fds, bool ok) {
  if (reply_arg.size() != info.size) return EIO;
  std::vector<std::byte> before(info.size, std::byte{0});
  if (copy_from_user(before.data(), reinterpret_cast<uintptr_t>(user_arg), user_size) != 0) {
    return EFAULT;
  }
  std::vector<std::byte> out(reply_arg.begin(), reply_arg.end());
  size_t at = 0;
  int err = 0;
  for (const UserBuffer& b : info.buffers) {
    b.set_ptr(out.data(), b.ptr(before.data()));
    if (b.dir != Dir::kOut) continue;
    const uint64_t n = out_elems(b, before.data(), out.data(), ok) * b.elem_size;
    if (n > extra.size() - at) return EIO;
    if (n > 0 && copy_to_user(b.ptr(before.data()), extra.data() + at, n) != 0) err = EFAULT;
    at += n;
  }
  if (at != extra.size()) return EIO;
  size_t next_fd = 0;
  for (const FdField& f : info.fds) {
    if (f.kind == Kind::kArray) {
      f.set_ptr(out.data(), f.ptr(before.data()));
    } else if (f.kind == Kind::kIn) {
      f.set_fd(out.data(), f.fd(before.data()));
    } else if (f.fd(out.data()) >= 0) {
      if (next_fd >= fds.size()) return EIO;
      f.set_fd(out.data(), fds[next_fd++].release());  // now the caller's descriptor
    }
  }
  if (next_fd != fds.size()) return EIO;
  if (copy_to_user(reinterpret_cast<uintptr_t>(user_arg), out.data(), user_size) != 0) {
    return EFAULT;
  }
  return err;
}

Expected<void> unpack_request(const IoctlInfo& info, std::span<std::byte> arg,
                              std::span<const std::byte> extra, std::vector<UniqueFd> fds,
                              ServerCall& call) {
  call.client_arg.assign(arg.begin(), arg.end());
  call.buffers.assign(info.buffers.size(), {});
  call.fd_arrays.clear();
  call.received = std::move(fds);
  size_t at = 0;
  for (size_t i = 0; i < info.buffers.size(); ++i) {
    const UserBuffer& b = info.buffers[i];
    std::vector<std::byte>& buf = call.buffers[i];
    if (b.ptr(arg.data()) == 0) continue;
    if (b.dir == Dir::kIn) {
      const uint64_t n = in_bytes(b, arg.data());
      if (n == 0 && b.len(arg.data()) > b.max) {
        b.set_ptr(arg.data(), 0);  // an over-long count travels without bytes
        continue;
      }
      if (n > extra.size() - at) {
        return make_error(EPROTO, fmt::format("{}: {} bytes of a user buffer, {} sent", info.name,
                                              n, extra.size() - at));
      }
      buf.assign(extra.begin() + at, extra.begin() + at + n);
      at += n;
    } else {
      const uint64_t n = std::min(b.len(arg.data()), b.max);
      b.set_len(arg.data(), n);
      buf.assign(n * b.elem_size, std::byte{0});
    }
    // A non-null pointer even for an empty buffer, as the caller's was.
    static std::byte empty;
    b.set_ptr(arg.data(), reinterpret_cast<uintptr_t>(buf.empty() ? &empty : buf.data()));
  }
  size_t next_fd = 0;
  auto take_fd = [&](int32_t sent) -> Expected<int32_t> {
    if (sent < 0) return int32_t{-1};
    if (next_fd >= call.received.size()) {
      return make_error(EPROTO, fmt::format("{}: more descriptors named than sent", info.name));
    }
    return static_cast<int32_t>(call.received[next_fd++].get());
  };
  for (const FdField& f : info.fds) {
    if (f.kind == Kind::kIn) {
      auto fd = take_fd(f.fd(arg.data()));
      if (!fd) return fd.error();
      f.set_fd(arg.data(), *fd);
    } else if (f.kind == Kind::kArray) {
      const uint64_t n = array_len(f, arg.data());
      if (f.ptr(arg.data()) != 0 && n == 0 && f.count(arg.data()) > f.max) {
        f.set_ptr(arg.data(), 0);
        continue;
      }
      if (f.ptr(arg.data()) == 0) continue;
      if (n * 4 > extra.size() - at) {
        return make_error(EPROTO, fmt::format("{}: {} descriptors, {} bytes sent", info.name, n,
                                              extra.size() - at));
      }
      std::vector<int32_t>& list = call.fd_arrays.emplace_back(n);
      if (n > 0) std::memcpy(list.data(), extra.data() + at, n * 4);
      at += n * 4;
      for (int32_t& fd : list) {
        auto mine = take_fd(fd);
        if (!mine) return mine.error();
        fd = *mine;
      }
      static int32_t none;
      f.set_ptr(arg.data(), reinterpret_cast<uintptr_t>(list.empty() ? &none : list.data()));
    }
  }
  if (at != extra.size() || next_fd != call.received.size()) {
    return make_error(EPROTO,
                      fmt::format("{}: {} extra bytes and {} descriptors beyond what "
                                  "the struct names",
                                  info.name, extra.size() - at, call.received.size() - next_fd));
  }
  return ok();
}

std::vector<std::byte> pack_reply(const IoctlInfo& info, std::span<std::byte> arg,
                                  const ServerCall& call, bool ok, std::vector<UniqueFd>& fds_out) {
  std::vector<std::byte> extra;
  const std::byte* sent = call.client_arg.data();
  for (size_t i = 0; i < info.buffers.size(); ++i) {
    const UserBuffer& b = info.buffers[i];
    if (b.dir == Dir::kOut) {
      // What the driver saw as the count before: the clamped one.
      const uint64_t room = b.ptr(sent) == 0 ? 0 : std::min(b.len(sent), b.max);
      const uint64_t n =
          ok && b.ptr(sent) != 0 ? std::min(room, b.len(arg.data())) * b.elem_size : 0;
      extra.insert(extra.end(), call.buffers[i].begin(), call.buffers[i].begin() + n);
      // A count the driver did not touch goes back as the client sent it.
      if (b.ptr(sent) != 0 && b.len(arg.data()) == room) b.set_len(arg.data(), b.len(sent));
    }
    b.set_ptr(arg.data(), b.ptr(sent));
  }
  for (const FdField& f : info.fds) {
    if (f.kind == Kind::kOut) {
      const int32_t fd = f.fd(arg.data());
      if (ok && fd >= 0) {
        fds_out.emplace_back(fd);  // sent, then closed here
      } else if (fd >= 0) {
        ::close(fd);  // a failed call made one anyway: not the client's
        f.set_fd(arg.data(), -1);
      }
    } else if (f.kind == Kind::kArray) {
      f.set_ptr(arg.data(), f.ptr(sent));
    } else {
      f.set_fd(arg.data(), f.fd(sent));
    }
  }
  return extra;
}

}  // namespace npu::wire
