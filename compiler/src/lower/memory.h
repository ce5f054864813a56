// Private: the two device buffers a package's lowering fills. ConstantBuffer is the read-only
// `constants` buffer (weights, biases, channel and quantization parameters, host-op
// constants): blobs appended 64-byte aligned, identical blobs stored once. Arena is the
// `activations` buffer: first-fit allocation with reference counts, a freed slot merges with
// its free neighbours and is reused by later allocations (liveness.h decides when values
// die). Both are plain single-threaded values owned by one Lowering (lowering.h) and know
// nothing of the graph; device addresses are kConstantsVa/kArenaVa plus an offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace npu::compiler::detail {

/// Device VAs of the two buffers (the package records offsets; the runtime maps them here).
inline constexpr uint64_t kArenaVa = 0x1'0000'0000ull;
inline constexpr uint64_t kConstantsVa = 0x80'0000'0000ull;

/// `x` rounded up to a multiple of 64.
constexpr uint64_t align64(uint64_t x) {
  return (x + 63) & ~uint64_t{63};
}

/// The constants buffer's contents.
class ConstantBuffer {
 public:
  /// Appends `bytes` (64-byte aligned) and returns its device VA; identical blobs are shared.
  uint64_t add(std::span<const std::byte> bytes);
  /// The same for a blob of `size` bytes that `fill(std::span<std::byte>)` writes in place
  /// at the end of the buffer (a relaid-out weight), saving the temporary copy; when the blob
  /// is a duplicate, the bytes are dropped again and the earlier blob's VA returned.
  template <typename Fill>
  uint64_t add_in_place(size_t size, Fill&& fill) {
    const size_t before = bytes_.size();
    const size_t off = align64(before);
    bytes_.resize(off + size);
    fill(std::span<std::byte>(bytes_.data() + off, size));
    return keep_or_share(before, off);
  }
  /// Room for `bytes` in total, so appending copies each constant once (no regrowth); the
  /// room is advised to huge pages (huge_pages.h).
  void reserve(size_t bytes);
  size_t size() const { return bytes_.size(); }
  /// The contents, moved out when the package is written.
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  // Indexes the blob appended at `off` (the buffer ended at `before`), or drops it and returns
  // the VA of an identical blob stored earlier.
  uint64_t keep_or_share(size_t before, size_t off);
  // The offset of a stored blob equal to `blob` (hash `hash`) that ends by `limit`.
  std::optional<uint64_t> find_stored(std::span<const std::byte> blob, size_t hash,
                                      size_t limit) const;
  static size_t hash_of(std::span<const std::byte> blob) {
    return std::hash<std::string_view>{}(
        std::string_view(reinterpret_cast<const char*>(blob.data()), blob.size()));
  }

  std::vector<std::byte> bytes_;
  std::unordered_multimap<size_t, uint64_t> index_;  // hash of a blob -> its offset
};

/// The activation arena's allocator. An allocation is an id; it starts with one reference.
class Arena {
 public:
  /// A slot of at least `bytes` (64-byte aligned, never empty): the first free one that
  /// fits, else one at the end.
  int alloc(uint64_t bytes);
  /// Another reference to allocation `id` (an alias of its bytes).
  void retain(int id) { allocs_[static_cast<size_t>(id)].refs++; }
  /// Drops one reference; the last one frees the slot. Ids < 0 are ignored.
  void release(int id);
  /// Byte offset of allocation `id` in the arena.
  uint64_t offset(int id) const { return allocs_[static_cast<size_t>(id)].offset; }
  /// Size the arena buffer needs: the end of the furthest allocation ever made (at least 64).
  uint64_t extent() const;

 private:
  struct Alloc {
    uint64_t offset = 0, size = 0;
    int refs = 0;
  };
  std::vector<Alloc> allocs_;
  std::map<uint64_t, uint64_t> free_list_;  // offset -> size
  uint64_t end_ = 0;                        // end of the slots in use or free
};

}  // namespace npu::compiler::detail
