// VaAllocator: first fit, alignment, guard gaps, reuse and coalescing.
#include "va_allocator.h"

#include <gtest/gtest.h>

namespace npu::emu::kmd {
namespace {

constexpr uint64_t K64 = 64 * 1024;

TEST(VaAllocator, AlignedWithGuard) {
  VaAllocator va;
  const auto a = va.alloc(4096);
  const auto b = va.alloc(K64);
  const auto c = va.alloc(K64 + 1);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(*a, VaAllocator::kBase);
  EXPECT_EQ(*b, *a + K64 + VaAllocator::kGuard);
  EXPECT_EQ(*c, *b + K64 + VaAllocator::kGuard);
  EXPECT_EQ(*c % VaAllocator::kAlign, 0u);
  EXPECT_EQ(va.reserved(), (1 + 1 + 2) * K64 + 3 * VaAllocator::kGuard);
}

TEST(VaAllocator, FirstFitReuseAndCoalesce) {
  VaAllocator va;
  const auto a = va.alloc(K64);
  const auto b = va.alloc(K64);
  const auto c = va.alloc(K64);
  ASSERT_TRUE(a && b && c);
  va.free(*b);
  EXPECT_EQ(va.alloc(K64), b);  // the hole is reused first
  va.free(*a);
  va.free(*b);  // a and b coalesce: room for 3 x 64K minus one guard
  const auto big = va.alloc(2 * K64 + K64);
  ASSERT_TRUE(big);
  EXPECT_EQ(*big, *a);
  va.free(*big);
  va.free(*c);
  EXPECT_EQ(va.reserved(), 0u);
  EXPECT_EQ(va.alloc(K64), a);
}

TEST(VaAllocator, FullAndBadSizes) {
  VaAllocator va(0x10000, 0x10000 + 4 * K64);
  EXPECT_FALSE(va.alloc(0));
  EXPECT_FALSE(va.alloc(4 * K64));  // no room for the guard
  EXPECT_TRUE(va.alloc(3 * K64));
  EXPECT_FALSE(va.alloc(1));
  va.free(12345);  // unknown: ignored
}

TEST(VaAllocator, Reserve) {
  VaAllocator va;
  const uint64_t b = VaAllocator::kBase;
  EXPECT_TRUE(va.reserve(b + 4 * K64, 4096));
  EXPECT_FALSE(va.reserve(b + 4 * K64, 4096));                 // taken
  EXPECT_FALSE(va.reserve(b + 3 * K64, 2 * K64));              // overlaps
  EXPECT_FALSE(va.reserve(b + 100, 4096));                     // misaligned
  EXPECT_FALSE(va.reserve(b - K64, 4096));                     // below the range
  EXPECT_FALSE(va.reserve(VaAllocator::kEnd - K64, 2 * K64));  // past the end
  EXPECT_TRUE(va.reserve(b + 5 * K64, K64));                   // adjacent, no guard
  // alloc() fills the hole before the reservations when it fits (with its guard).
  EXPECT_EQ(va.alloc(K64), b);
  EXPECT_EQ(va.alloc(K64), b + 2 * K64);
  EXPECT_EQ(va.alloc(K64), b + 6 * K64);  // no room left below: after the reservations
  va.free(b + 4 * K64);
  EXPECT_TRUE(va.reserve(b + 4 * K64, K64));
}

}  // namespace
}  // namespace npu::emu::kmd
