// Private: transparent huge pages for the compiler's few large, freshly allocated buffers (a
// model's weights as the IR's constants, folded weights, the package's constants buffer).
// Each 4 KiB page touched for the first time is a page fault; on this project's VMs the
// faults were most of ResNet-50's compile time (100 MB of weights copied a few times: 80-100k
// faults). A 2 MiB page is one fault. Only the buffers named here are advised: malloc and the
// rest of the process are left as they are (the glibc tunable glibc.malloc.hugetlb=1 did the
// same process-wide and made the runtime slower). Where the kernel has THP off or the memory
// is already touched, the advice changes nothing; results never depend on it.
// Stateless and thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace npu::compiler::detail {

/// Buffers smaller than this are not advised (no whole huge page inside them).
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

/// madvise(MADV_HUGEPAGE) on the whole 2 MiB pages inside [p, p + n); errors are ignored.
void advise_huge_pages(void* p, size_t n);

/// `v` with room for at least `n` bytes, its new storage advised before anything touches it.
void reserve_huge(std::vector<std::byte>& v, size_t n);

}  // namespace npu::compiler::detail
