// The generic ioctl marshalling of npu-daemon's wire (npu/ioctl_marshal.h).
#include "npu/ioctl_marshal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "npu/user_memory.h"

namespace npu::wire {
namespace {

using Dir = UserBuffer::Dir;

// Bytes an IN buffer of the struct `arg` carries: 0 when its pointer is null or its count is
// above its max.
uint64_t in_bytes(const UserBuffer& b, const std::byte* arg) {
  const uint64_t n = b.len(arg);
  if (b.ptr(arg) == 0 || n > b.max) return 0;
  return n * b.elem_size;
}

// Elements the driver wrote to an OUT buffer: min(count before, count after), count before
// clamped to the row's max; none unless the call succeeded and the pointer was set.
uint64_t out_elems(const UserBuffer& b, const std::byte* before, const std::byte* after, bool ok) {
  if (!ok || b.ptr(before) == 0) return 0;
  return std::min({b.len(before), b.max, b.len(after)});
}

}  // namespace

Expected<IoctlRequest> pack_request(const IoctlInfo& info, const void* user_arg) {
  IoctlRequest r;
  r.arg.resize(info.size);
  if (copy_from_user(r.arg.data(), reinterpret_cast<uintptr_t>(user_arg), info.size) != 0) {
    return make_error(EFAULT, fmt::format("{}: argument not readable", info.name));
  }
  for (const UserBuffer& b : info.buffers) {
    if (b.dir != Dir::kIn) continue;
    const uint64_t n = in_bytes(b, r.arg.data());
    if (n == 0) {
      if (b.ptr(r.arg.data()) != 0 && b.len(r.arg.data()) > b.max) b.set_ptr(r.arg.data(), 0);
      continue;
    }
    const size_t at = r.extra.size();
    r.extra.resize(at + n);
    if (copy_from_user(r.extra.data() + at, b.ptr(r.arg.data()), n) != 0) {
      r.extra.resize(at);
      b.set_ptr(r.arg.data(), 0);  // the driver reports EFAULT where it reads it
    }
  }
  return r;
}

int unpack_reply(const IoctlInfo& info, void* user_arg, std::span<const std::byte> reply_arg,
                 std::span<const std::byte> extra, bool ok) {
  if (reply_arg.size() != info.size) return EIO;
  std::vector<std::byte> before(info.size);
  if (copy_from_user(before.data(), reinterpret_cast<uintptr_t>(user_arg), info.size) != 0) {
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
  if (copy_to_user(reinterpret_cast<uintptr_t>(user_arg), out.data(), info.size) != 0) {
    return EFAULT;
  }
  return err;
}

Expected<void> unpack_request(const IoctlInfo& info, std::span<std::byte> arg,
                              std::span<const std::byte> extra, ServerCall& call) {
  call.client_arg.assign(arg.begin(), arg.end());
  call.buffers.assign(info.buffers.size(), {});
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
  if (at != extra.size()) {
    return make_error(EPROTO, fmt::format("{}: {} extra bytes beyond the user buffers", info.name,
                                          extra.size() - at));
  }
  return ok();
}

std::vector<std::byte> pack_reply(const IoctlInfo& info, std::span<std::byte> arg,
                                  const ServerCall& call, bool ok) {
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
  return extra;
}

}  // namespace npu::wire
