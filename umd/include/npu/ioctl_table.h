// The ABI's ioctl table (uapi/npu_ioctls.def) as data: for every request the device node
// answers, its name, argument size, the user pointers inside its argument struct (where they
// are, how many bytes they cover, which way the bytes go) and whether it blocks until a
// deadline. libnpu names and traces ioctls from it, and npu-daemon's wire client and server
// (npu/ioctl_marshal.h) carry user-pointer bytes across the process boundary by it, so a new
// ioctl needs no new marshalling code: only its rows.
//
// Threading: the table is immutable. Lifetime: static.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace npu {

/// One user pointer inside an ioctl's argument struct (an NPU_IOCTL_USER_PTR row).
struct UserBuffer {
  enum class Dir : uint8_t { kIn, kOut };  // kIn: the kernel reads it; kOut: writes it
  uint32_t ptr_offset = 0;                 // the u64 (or pointer) field
  uint32_t len_offset = 0;                 // the element-count field
  uint32_t len_size = 0;                   // its width in bytes (4 or 8)
  uint32_t elem_size = 0;                  // bytes per element
  Dir dir = Dir::kIn;
  uint64_t max = 0;  // most elements carried across a process boundary

  uint64_t ptr(const std::byte* arg) const;
  void set_ptr(std::byte* arg, uint64_t value) const;
  uint64_t len(const std::byte* arg) const;
  void set_len(std::byte* arg, uint64_t value) const;
};

/// A descriptor field of an ioctl's argument struct (NPU_IOCTL_FD_* rows).
struct FdField {
  enum class Kind : uint8_t { kIn, kOut, kArray };
  Kind kind = Kind::kIn;
  uint32_t offset = 0;        // the __s32 field (kIn, kOut) or the user pointer (kArray)
  uint32_t count_offset = 0;  // kArray: the element-count field
  uint32_t count_size = 0;    // kArray: its width in bytes
  uint32_t max = 0;           // kArray: most descriptors

  int32_t fd(const std::byte* arg) const;
  void set_fd(std::byte* arg, int32_t fd) const;
  uint64_t ptr(const std::byte* arg) const;
  void set_ptr(std::byte* arg, uint64_t value) const;
  uint64_t count(const std::byte* arg) const;
};

struct IoctlInfo {
  unsigned long request = 0;
  const char* name = "";  // "SUBMIT", "VERSION", ...
  uint32_t size = 0;      // the argument struct's size (== _IOC_SIZE(request))
  uint32_t min_size = 0;  // the smallest _IOC_SIZE accepted (a grown struct's first size)
  bool core = false;      // a core DRM ioctl (drm.h), not one of the driver's
  std::span<const UserBuffer> buffers;
  std::span<const FdField> fds;
  int32_t deadline_offset = -1;  // offset of the __s64 absolute deadline; -1: never blocks

  bool blocks() const { return deadline_offset >= 0; }
  int64_t deadline(const std::byte* arg) const;
  void set_deadline(std::byte* arg, int64_t value) const;
};

/// Every row of npu_ioctls.def (core ioctls first, then the driver's in number order).
std::span<const IoctlInfo> ioctl_table();

/// The row of `request` — its type and number, with a size from min_size to size — or
/// nullptr when the node does not answer it.
const IoctlInfo* find_ioctl(unsigned long request);

}  // namespace npu
