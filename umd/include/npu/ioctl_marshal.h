// Carrying an ioctl across a process boundary (npu-daemon's wire, uapi/npu_daemon.h): the
// argument struct travels as bytes, and so do the bytes behind its user pointers, which mean
// nothing in the other process, and the descriptors it names. Which fields are user
// pointers or descriptors, how long the buffers are and which way they go comes from the
// ioctl table (npu/ioctl_table.h), so these functions serve every ioctl of
// uapi/npu_ioctls.def.
//
// The struct travels at its current size: an older caller's smaller one (a grown struct) is
// zero-extended on the way out and gets only its own bytes back. The request's extra bytes
// are the IN buffers, then each descriptor array's elements; the reply's are the OUT buffers,
// in table order. A buffer whose pointer is null travels as null with no bytes, so the driver
// answers EFAULT (or not, as drm_copy_field does) where it would in process. An IN buffer
// whose count is above its row's max, or whose bytes the client cannot read, also travels as
// null: the driver then rejects the count, or reports EFAULT at the point it reads it, in the
// order of its own checks. An OUT buffer is given room for at most max elements; after a
// successful call the server returns min(count before, count after) elements of it.
//
// Descriptors (NPU_IOCTL_FD_* rows) travel with SCM_RIGHTS, in row order: every FD_IN field
// and FD_ARRAY element that is an open descriptor of the client's; one that is not travels as
// -1 without a descriptor, and the driver answers EBADF where it looks at it. The server puts
// its received numbers in their place and closes them after the call. FD_OUT fields the
// driver filled come back the same way and become new descriptors of the client's.
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

#include "npu/daemon_wire.h"
#include "npu/expected.h"
#include "npu/ioctl_table.h"

namespace npu::wire {

/// What the client sends for one call.
struct IoctlRequest {
  std::vector<std::byte> arg;    // the argument struct at its current size
  std::vector<std::byte> extra;  // the IN buffers' bytes, then the descriptor arrays'
  std::vector<int> fds;          // the caller's descriptors to pass (not owned)
};

/// Reads the caller's argument struct (`user_size` bytes at `user_arg`, zero-extended), its
/// IN buffers and the descriptors it names. EFAULT when the struct itself is not readable.
Expected<IoctlRequest> pack_request(const IoctlInfo& info, const void* user_arg,
                                    uint32_t user_size);

/// Finishes a call on the client: writes the OUT bytes in `extra` to the caller's pointers,
/// installs the descriptors that came back (`fds`, taken) in the FD_OUT fields, then copies
/// `reply_arg` (its first `user_size` bytes) to `user_arg` with the caller's pointer values
/// kept. `ok`: the driver returned 0. Returns 0, EFAULT (a pointer or the struct not
/// writable) or EIO (the reply does not fit the request).
int unpack_reply(const IoctlInfo& info, void* user_arg, uint32_t user_size,
                 std::span<const std::byte> reply_arg, std::span<const std::byte> extra,
                 std::vector<UniqueFd>& fds, bool ok);

/// The server's copies of one call's user buffers and descriptors.
struct ServerCall {
  std::vector<std::byte> client_arg;  // the struct as the client sent it
  std::vector<std::vector<std::byte>> buffers;
  std::vector<std::vector<int32_t>> fd_arrays;  // one per FD_ARRAY row, in this process
  std::vector<UniqueFd> received;               // closed with the call
};

/// Points the user-pointer fields of `arg` (the struct as received) at buffers of this
/// process: IN ones filled from `extra`, OUT ones zeroed (counts clamped to their max), and
/// the descriptor fields at the descriptors `fds` (taken) brought. EPROTO when `extra` or
/// `fds` do not hold exactly what the struct describes.
Expected<void> unpack_request(const IoctlInfo& info, std::span<std::byte> arg,
                              std::span<const std::byte> extra, std::vector<UniqueFd> fds,
                              ServerCall& call);

/// After the driver's call: restores the client's pointer values (and an OUT count the
/// driver left as clamped) in `arg`, moves the descriptors the driver made (FD_OUT) into
/// `fds_out` (to send; none unless `ok`), and returns the OUT bytes to send.
std::vector<std::byte> pack_reply(const IoctlInfo& info, std::span<std::byte> arg,
                                  const ServerCall& call, bool ok, std::vector<UniqueFd>& fds_out);

}  // namespace npu::wire
