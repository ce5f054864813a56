// PackedCache<P>: what a thread derived last from some SRAM bytes (the packed GEMM panels of
// weights, a widened half input tile), kept while those bytes are unchanged
// (sram_versions.h). A compiler's convolution slice runs as several row-band tiles on the same
// weights, and each tile packed them again: ResNet-50 packed 303 MB of fp32 weights per
// inference, 213 MB of them the previous tile's; the slices of a layer read one input tile.
//
// Threading: one cache per thread and panel type (a thread_local in the caller); the panels
// handed out stay valid until the next get() on that thread. Lifetime: the panels live as
// long as the thread; the free list of Scratch is made first, so it outlives them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "scratch.h"
#include "sram_versions.h"

namespace npu::emu::kern {

template <class P>
class PackedCache {
 public:
  /// What else the panels depend on besides the bytes: shapes, dtypes, the tile kernel.
  using Key = std::array<uint64_t, 4>;

  PackedCache() { (void)scratch_kept_bytes(); }

  /// The panels of the `bytes` bytes at SRAM offset `addr` (host address w) packed by
  /// make(std::optional<P>&) (which emplaces them), or the ones packed last when the same
  /// bytes, unchanged since, and the same key were asked for. Without the device's SRAM
  /// versions (kernel tests) nothing is reused.
  template <class Make>
  const P& get(const std::byte* w, uint64_t addr, uint64_t bytes, const Key& key, Make&& make) {
    const SramVersions* versions = current_sram_versions();
    const uint64_t version = versions != nullptr ? versions->version(addr, addr + bytes) : 0;
    if (packed_ && versions != nullptr && versions == versions_ && version == version_ && w == w_ &&
        bytes == bytes_ && key == key_)
      return *packed_;
    packed_.reset();
    make(packed_);
    versions_ = versions, version_ = version, w_ = w, bytes_ = bytes, key_ = key;
    return *packed_;
  }

 private:
  std::optional<P> packed_;
  const SramVersions* versions_ = nullptr;  // nullptr: not reusable
  uint64_t version_ = 0;
  const std::byte* w_ = nullptr;
  uint64_t bytes_ = 0;
  Key key_{};
};

}  // namespace npu::emu::kern
