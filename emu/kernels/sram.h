// Private helpers of the engine kernels: typed, alignment-free access to the SRAM byte span
// (every load/store goes through memcpy, which compiles to plain unaligned moves) and small
// compile-time dispatch utilities.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

namespace npu::emu::kern {

template <class T>
inline T ld(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
inline void st(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

/// Whether fp32 data at p may be read through a float pointer (4-byte aligned; SRAM itself is
/// 16-byte aligned, so this is the tile address).
inline bool aligned4(const std::byte* p) {
  return reinterpret_cast<uintptr_t>(p) % alignof(float) == 0;
}

/// Element i of a T array starting at byte pointer p.
template <class T>
inline T ldi(const std::byte* p, size_t i) {
  return ld<T>(p + i * sizeof(T));
}
template <class T>
inline void sti(std::byte* p, size_t i, T v) {
  st<T>(p + i * sizeof(T), v);
}

/// Copies `count` T values at SRAM address `addr` into a vector (aligned, typed).
template <class T>
std::vector<T> read_array(std::span<const std::byte> sram, uint64_t addr, size_t count) {
  std::vector<T> out(count);
  if (count != 0) std::memcpy(out.data(), sram.data() + addr, count * sizeof(T));
  return out;
}

/// Calls f(std::integral_constant<uint8_t, v>) for the runtime value v in [Lo, Hi]; the
/// callee is instantiated once per value, so switches on v inside it fold away.
template <uint8_t Lo, uint8_t Hi, class F>
inline void with_const(uint8_t v, F&& f) {
  if constexpr (Lo <= Hi) {
    if (v == Lo) {
      f(std::integral_constant<uint8_t, Lo>{});
      return;
    }
    if constexpr (Lo < Hi) with_const<static_cast<uint8_t>(Lo + 1), Hi>(v, f);
  }
}

}  // namespace npu::emu::kern
