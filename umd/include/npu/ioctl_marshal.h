// Carrying an ioctl across a process boundary (npu-daemon's wire, uapi/npu_daemon.h): the
// argument struct travels as bytes, and so do the bytes behind its user pointers, which mean
// nothing in the other process. Which fields are user pointers, how long their buffers are
// and which way they go comes from the ioctl table (npu/ioctl_table.h), so these functions
// serve every ioctl of uapi/npu_ioctls.def.
//
// The request's extra bytes are the IN buffers, the reply's the OUT buffers, each in table
// order. A buffer whose pointer is null travels as null with no bytes, so the driver answers
// EFAULT (or not, as drm_copy_field does) where it would in process. An IN buffer whose count
// is above its row's max, or whose bytes the client cannot read, also travels as null: the
// driver then rejects the count, or reports EFAULT at the point it reads the buffer, in the
// order of its own checks. An OUT buffer is given room for at most max elements; after a
// successful call the server returns min(count before, count after) elements of it (what the
// driver wrote) and the client writes them to the caller's pointer.
//
// Client side: pack_request(), then unpack_reply(). Server side: unpack_request(), call the
// driver, pack_reply(). User memory is read and written with checked copies
// (npu/user_memory.h): a bad pointer is EFAULT, never a crash.
//
// Threading: stateless functions; a ServerCall belongs to one call.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "npu/expected.h"
#include "npu/ioctl_table.h"

namespace npu::wire {

/// What the client sends for one call.
struct IoctlRequest {
  std::vector<std::byte> arg;    // the argument struct (pointers of buffers not sent: 0)
  std::vector<std::byte> extra;  // the IN buffers' bytes
};

/// Reads the caller's argument struct at `user_arg` and its IN buffers. EFAULT when the
/// struct itself is not readable.
Expected<IoctlRequest> pack_request(const IoctlInfo& info, const void* user_arg);

/// Finishes a call on the client: writes the OUT bytes in `extra` to the caller's pointers
/// (as they were in the caller's struct, `user_arg`), then copies `reply_arg` to `user_arg`
/// with the caller's pointer values kept. `ok`: the driver returned 0. Returns 0, EFAULT (a
/// pointer or the struct not writable) or EIO (the reply does not fit the request).
int unpack_reply(const IoctlInfo& info, void* user_arg, std::span<const std::byte> reply_arg,
                 std::span<const std::byte> extra, bool ok);

/// The server's copies of one call's user buffers.
struct ServerCall {
  std::vector<std::byte> client_arg;  // the struct as the client sent it
  std::vector<std::vector<std::byte>> buffers;
};

/// Points the user-pointer fields of `arg` (the struct as received) at buffers of this
/// process: IN ones filled from `extra`, OUT ones zeroed (counts clamped to their max).
/// EPROTO when `extra` does not hold exactly the IN bytes the struct describes.
Expected<void> unpack_request(const IoctlInfo& info, std::span<std::byte> arg,
                              std::span<const std::byte> extra, ServerCall& call);

/// After the driver's call: restores the client's pointer values (and an OUT count the
/// driver left as clamped) in `arg`, and returns the OUT bytes to send (none unless `ok`).
std::vector<std::byte> pack_reply(const IoctlInfo& info, std::span<std::byte> arg,
                                  const ServerCall& call, bool ok);

}  // namespace npu::wire
