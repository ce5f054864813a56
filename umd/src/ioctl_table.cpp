// The ioctl table built from uapi/npu_ioctls.def (npu/ioctl_table.h).
#include "npu/ioctl_table.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>

#include <sys/ioctl.h>

#include "npu_accel.h"

namespace npu {
namespace {

template <typename T>
uint64_t load(const std::byte* p) {
  T v{};
  std::memcpy(&v, p, sizeof(T));
  return static_cast<uint64_t>(v);
}

template <typename T>
void store(std::byte* p, uint64_t value) {
  const auto v = static_cast<T>(value);
  std::memcpy(p, &v, sizeof(T));
}

#define NPU_FIELD_SIZE(type, field) \
  static_cast<uint32_t>(sizeof(static_cast<type*>(nullptr)->field))

struct Row {
  unsigned long request;
  const char* name;
  uint32_t size;
  bool core;
};

constexpr Row kRows[] = {
#define NPU_CORE_IOCTL(NAME, name, type) {DRM_IOCTL_##NAME, #NAME, sizeof(type), true},
#define NPU_IOCTL(NAME, name, type) {DRM_IOCTL_NPU_##NAME, #NAME, sizeof(type), false},
#include "npu_ioctls.def"
};

// Every user-pointer row, in the order of the .def file (the rows of one ioctl together), and
// the ioctl each belongs to.
#define IN UserBuffer::Dir::kIn
#define OUT UserBuffer::Dir::kOut
constexpr UserBuffer kBuffers[] = {
#define NPU_IOCTL_USER_PTR(REQ, type, ptr, len, elem, dir, max_elems)                          \
  UserBuffer{offsetof(type, ptr), offsetof(type, len), NPU_FIELD_SIZE(type, len), (elem), dir, \
             (max_elems)},
#include "npu_ioctls.def"
};
#undef IN
#undef OUT
constexpr unsigned long kBufferOwner[] = {
#define NPU_IOCTL_USER_PTR(REQ, type, ptr, len, elem, dir, max_elems) DRM_IOCTL_##REQ,
#include "npu_ioctls.def"
};
static_assert(std::size(kBuffers) == std::size(kBufferOwner));

struct Deadline {
  unsigned long request;
  int32_t offset;
};
constexpr Deadline kDeadlines[] = {
#define NPU_IOCTL_DEADLINE(REQ, type, field) {DRM_IOCTL_##REQ, offsetof(type, field)},
#include "npu_ioctls.def"
};

struct MinSize {
  unsigned long request;
  uint32_t size;
};
constexpr MinSize kMinSizes[] = {
#define NPU_IOCTL_MIN_SIZE(REQ, size) {DRM_IOCTL_##REQ, (size)},
#include "npu_ioctls.def"
    {0, 0},
};

constexpr FdField kFds[] = {
#define NPU_IOCTL_FD_IN(REQ, type, field) \
  FdField{FdField::Kind::kIn, offsetof(type, field), 0, 0, 1},
#define NPU_IOCTL_FD_OUT(REQ, type, field) \
  FdField{FdField::Kind::kOut, offsetof(type, field), 0, 0, 1},
#define NPU_IOCTL_FD_ARRAY(REQ, type, ptr, count, max_fds)                   \
  FdField{FdField::Kind::kArray, offsetof(type, ptr), offsetof(type, count), \
          NPU_FIELD_SIZE(type, count), (max_fds)},
#include "npu_ioctls.def"
};
constexpr unsigned long kFdOwner[] = {
#define NPU_IOCTL_FD_IN(REQ, type, field) DRM_IOCTL_##REQ,
#define NPU_IOCTL_FD_OUT(REQ, type, field) DRM_IOCTL_##REQ,
#define NPU_IOCTL_FD_ARRAY(REQ, type, ptr, count, max_fds) DRM_IOCTL_##REQ,
#include "npu_ioctls.def"
};
static_assert(std::size(kFds) == std::size(kFdOwner));

// The rows of `owner` that belong to `request` (the rows of one ioctl stand together).
template <typename Row, size_t N>
std::span<const Row> rows_of(const Row (&rows)[N], const unsigned long (&owner)[N],
                             unsigned long request) {
  const auto* first = std::find(std::begin(owner), std::end(owner), request);
  const auto* last =
      std::find_if(first, std::end(owner), [&](unsigned long o) { return o != request; });
  return std::span<const Row>(rows).subspan(first - std::begin(owner), last - first);
}

using Table = std::array<IoctlInfo, std::size(kRows)>;

Table build() {
  Table t{};
  for (size_t i = 0; i < t.size(); ++i) {
    const Row& r = kRows[i];
    IoctlInfo& info = t[i];
    info.request = r.request;
    info.name = r.name;
    info.size = r.size;
    info.core = r.core;
    info.buffers = rows_of(kBuffers, kBufferOwner, r.request);
    info.fds = rows_of(kFds, kFdOwner, r.request);
    info.min_size = r.size;
    for (const Deadline& d : kDeadlines) {
      if (d.request == r.request) info.deadline_offset = d.offset;
    }
    for (const MinSize& m : kMinSizes) {
      if (m.request == r.request) info.min_size = m.size;
    }
  }
  return t;
}

const Table& table() {
  static const Table t = build();
  return t;
}

}  // namespace

uint64_t UserBuffer::ptr(const std::byte* arg) const {
  return load<uint64_t>(arg + ptr_offset);
}
void UserBuffer::set_ptr(std::byte* arg, uint64_t value) const {
  store<uint64_t>(arg + ptr_offset, value);
}
uint64_t UserBuffer::len(const std::byte* arg) const {
  return len_size == 8 ? load<uint64_t>(arg + len_offset) : load<uint32_t>(arg + len_offset);
}
void UserBuffer::set_len(std::byte* arg, uint64_t value) const {
  if (len_size == 8) {
    store<uint64_t>(arg + len_offset, value);
  } else {
    store<uint32_t>(arg + len_offset, value);
  }
}

int32_t FdField::fd(const std::byte* arg) const {
  return static_cast<int32_t>(load<uint32_t>(arg + offset));
}
void FdField::set_fd(std::byte* arg, int32_t fd) const {
  store<uint32_t>(arg + offset, static_cast<uint32_t>(fd));
}
uint64_t FdField::ptr(const std::byte* arg) const {
  return load<uint64_t>(arg + offset);
}
void FdField::set_ptr(std::byte* arg, uint64_t value) const {
  store<uint64_t>(arg + offset, value);
}
uint64_t FdField::count(const std::byte* arg) const {
  return count_size == 8 ? load<uint64_t>(arg + count_offset) : load<uint32_t>(arg + count_offset);
}

int64_t IoctlInfo::deadline(const std::byte* arg) const {
  return static_cast<int64_t>(load<uint64_t>(arg + deadline_offset));
}
void IoctlInfo::set_deadline(std::byte* arg, int64_t value) const {
  store<uint64_t>(arg + deadline_offset, static_cast<uint64_t>(value));
}

std::span<const IoctlInfo> ioctl_table() {
  return table();
}

const IoctlInfo* find_ioctl(unsigned long request) {
  const auto same_call = [](unsigned long a, unsigned long b) {
    return _IOC_TYPE(a) == _IOC_TYPE(b) && _IOC_NR(a) == _IOC_NR(b) && _IOC_DIR(a) == _IOC_DIR(b);
  };
  for (const IoctlInfo& info : table()) {
    if (!same_call(info.request, request)) continue;
    const uint32_t size = _IOC_SIZE(request);
    return size >= info.min_size && size <= info.size ? &info : nullptr;
  }
  return nullptr;
}

}  // namespace npu
