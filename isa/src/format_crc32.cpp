// Table-driven CRC-32 (reflected polynomial 0xedb88320).
#include "npu/format/crc32.h"

#include <array>

namespace npu::format {
namespace {

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}

constexpr std::array<uint32_t, 256> kTable = make_table();

}  // namespace

uint32_t crc32(std::span<const std::byte> bytes, uint32_t crc) {
  crc = ~crc;
  for (std::byte b : bytes) crc = kTable[(crc ^ static_cast<uint8_t>(b)) & 0xff] ^ (crc >> 8);
  return ~crc;
}

}  // namespace npu::format
