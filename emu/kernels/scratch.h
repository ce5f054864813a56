// Scratch<T>: a lease of uninitialized working memory for one kernel call (packed GEMM
// operands, im2col blocks, accumulators), taken from a free list kept by the calling thread and
// given back when the lease ends. A model runs the same commands on every inference, so the
// blocks are found again instead of being allocated, page-faulted in and freed per command:
// glibc gives a large free block at the top of the heap back to the kernel (brk) and the next
// command faults it in again, which was most of a small model's time per inference (issue 9).
//
// Threading: each thread has its own free list (thread_local); a lease is used by the thread
// that took it, though other threads may read and write the memory while the lease lives (the
// GEMM worker reads a packed operand). Lifetime: a thread keeps at most kScratchKeptBytes of
// free blocks, blocks above kScratchMaxBlockBytes are never kept, and the list is freed when
// the thread exits. T must be an implicit-lifetime type (arithmetic types, plain structs).
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>

namespace npu::emu::kern {

inline constexpr size_t kScratchKeptBytes = size_t{64} << 20;
inline constexpr size_t kScratchMaxBlockBytes = size_t{32} << 20;

namespace detail {
struct ScratchBlock {
  std::unique_ptr<std::byte[]> data;
  size_t size = 0;
};
/// A block of at least `bytes` from this thread's free list, or a new one.
ScratchBlock take_scratch(size_t bytes);
/// Gives a block back to this thread's free list (or frees it, see the limits above).
void give_scratch(ScratchBlock block);
}  // namespace detail

/// Bytes of free blocks this thread keeps (tests).
size_t scratch_kept_bytes();

template <class T>
class Scratch {
  static_assert(std::is_trivially_default_constructible_v<T> &&
                std::is_trivially_destructible_v<T>);

 public:
  explicit Scratch(size_t count) : block_(detail::take_scratch(count * sizeof(T))) {}
  ~Scratch() { detail::give_scratch(std::move(block_)); }
  Scratch(Scratch&& other) noexcept : block_(std::move(other.block_)) { other.block_.size = 0; }
  Scratch& operator=(Scratch&&) = delete;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  T* get() const { return reinterpret_cast<T*>(block_.data.get()); }
  T& operator[](size_t i) const { return get()[i]; }

 private:
  detail::ScratchBlock block_;
};

}  // namespace npu::emu::kern
