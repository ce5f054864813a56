// madvise wrappers of huge_pages.h.
#include "huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace npu::compiler::detail {

void advise_huge_pages(void* p, size_t n) {
#ifdef MADV_HUGEPAGE
  if (n < kHugePageBytes) return;
  const auto start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (start + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  const uintptr_t last = (start + n) & ~(uintptr_t{kHugePageBytes} - 1);
  if (last > first) {
    (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
#else
  (void)p;
  (void)n;
#endif
}

void reserve_huge(std::vector<std::byte>& v, size_t n) {
  if (n <= v.capacity()) return;
  v.reserve(n);
  advise_huge_pages(v.data(), v.capacity());
}

}  // namespace npu::compiler::detail
