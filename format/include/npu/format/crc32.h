// CRC-32 (IEEE 802.3 / zlib polynomial, reflected, init and final xor 0xffffffff): the
// checksum of model packages. crc32("123456789") == 0xcbf43926.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace npu::format {

/// Continues a CRC-32 over `bytes`; start with crc = 0.
uint32_t crc32(std::span<const std::byte> bytes, uint32_t crc = 0);

}  // namespace npu::format
