// The constants buffer and the activation arena (see memory.h).
#include "lower/memory.h"

#include "huge_pages.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <iterator>
#include <optional>
#include <string_view>

namespace npu::compiler::detail {

void ConstantBuffer::reserve(size_t bytes) {
  reserve_huge(bytes_, bytes);
}

std::optional<uint64_t> ConstantBuffer::find_stored(std::span<const std::byte> blob, size_t hash,
                                                    size_t limit) const {
  auto [first, last] = index_.equal_range(hash);
  for (auto it = first; it != last; ++it) {
    const uint64_t at = it->second;
    if (at + blob.size() <= limit &&
        (blob.empty() || std::memcmp(bytes_.data() + at, blob.data(), blob.size()) == 0))
      return at;
  }
  return std::nullopt;
}

uint64_t ConstantBuffer::add(std::span<const std::byte> bytes) {
  // Identical blobs (a bias used twice, repeated qparams) are stored once.
  const size_t h = hash_of(bytes);
  if (const auto at = find_stored(bytes, h, bytes_.size())) return kConstantsVa + *at;
  const uint64_t off = align64(bytes_.size());
  bytes_.resize(off);  // zero padding to the alignment; the blob is copied without a zero fill
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  index_.emplace(h, off);
  return kConstantsVa + off;
}

uint64_t ConstantBuffer::keep_or_share(size_t before, size_t off) {
  const std::span<const std::byte> blob(bytes_.data() + off, bytes_.size() - off);
  const size_t h = hash_of(blob);
  if (const auto at = find_stored(blob, h, before)) {
    bytes_.resize(before);
    return kConstantsVa + *at;
  }
  index_.emplace(h, off);
  return kConstantsVa + off;
}

int Arena::alloc(uint64_t bytes) {
  const uint64_t size = align64(std::max<uint64_t>(bytes, 1));
  uint64_t at = end_;
  for (auto it = free_list_.begin(); it != free_list_.end(); ++it) {
    if (it->second < size) continue;
    at = it->first;
    const uint64_t rest = it->second - size;
    free_list_.erase(it);
    if (rest) free_list_[at + size] = rest;
    break;
  }
  if (at == end_) end_ += size;
  allocs_.push_back({at, size, 1});
  return static_cast<int>(allocs_.size() - 1);
}

void Arena::release(int id) {
  if (id < 0) return;
  Alloc& a = allocs_[static_cast<size_t>(id)];
  if (--a.refs > 0) return;
  uint64_t off = a.offset, size = a.size;
  // Coalesce with the neighbours.
  auto next = free_list_.lower_bound(off);
  if (next != free_list_.end() && next->first == off + size) {
    size += next->second;
    next = free_list_.erase(next);
  }
  if (next != free_list_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      off = prev->first;
      size += prev->second;
      free_list_.erase(prev);
    }
  }
  if (off + size == end_) {
    end_ = off;
  } else {
    free_list_[off] = size;
  }
}

uint64_t Arena::extent() const {
  uint64_t e = 64;
  for (const Alloc& a : allocs_) e = std::max(e, a.offset + a.size);
  return e;
}

}  // namespace npu::compiler::detail
