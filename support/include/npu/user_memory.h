// Checked copies from and to addresses an untrusted caller handed over: the ABI's u64 user
// pointers and ioctl argument pointers of a program we did not write (the preload shim, the
// daemon's wire client). A bad address fails with EFAULT instead of crashing the process, as
// the kernel's copy_from_user()/copy_to_user() do.
//
// How: a range inside the calling thread's stack, between its current stack pointer and the
// stack's top, is always mapped read-write and is copied with memcpy (the common case: ioctl
// argument structs live on the caller's stack); anything else goes through
// process_vm_readv()/process_vm_writev() on this process, which the kernel checks page by
// page. Null is EFAULT whatever the length, as the kernel's access_ok() of address 0 is.
// Where those calls are not permitted (some seccomp sandboxes), the copies fall back to
// memcpy once, with a warning on stderr: wild pointers then crash as in any library.
//
// Threading: every function may be called from any thread; the stack bounds are read once
// per thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace npu {

/// Copies `n` bytes from the caller-supplied address `src` to `dst`: 0, or EFAULT when `src`
/// is null (and n > 0) or any byte of it is not readable.
int copy_from_user(void* dst, uint64_t src, size_t n);

/// Copies `n` bytes from `src` to the caller-supplied address `dst`: 0, or EFAULT when `dst`
/// is null (and n > 0) or any byte of it is not writable. Nothing is written past the first
/// bad page; bytes before it may have been written (as the kernel's copy_to_user).
int copy_to_user(uint64_t dst, const void* src, size_t n);

}  // namespace npu
