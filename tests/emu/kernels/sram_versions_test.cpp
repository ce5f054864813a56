// kern::SramVersions: a range's version changes exactly when a write touched one of its 64-byte
// pages, whether the writes and reads cover whole 4 KiB blocks, parts of them or both.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "sram_versions.h"

namespace npu::emu::kern {
namespace {

struct Range {
  uint64_t begin, end;
};

/// A random range: often block-aligned, often not, of 1 byte to 20 KiB.
Range random_range(std::mt19937_64& rng, uint64_t size) {
  const bool aligned = rng() % 2 == 0;
  uint64_t len = 1 + rng() % (20 * 1024);
  uint64_t begin = rng() % size;
  if (aligned) {
    begin &= ~uint64_t{4095};
    len = (len + 4095) & ~uint64_t{4095};
  }
  return {begin, std::min(size, begin + len)};
}

TEST(SramVersions, ARangeChangesExactlyWhenAWriteTouchedItsPages) {
  constexpr uint64_t kSize = 256 * 1024 + 100;  // not a whole number of blocks
  SramVersions v(kSize);
  std::mt19937_64 rng(7);
  std::vector<uint64_t> page_writes(kSize / 64 + 1, 0);  // writes per page, the model
  for (int iter = 0; iter < 20000; ++iter) {
    const Range r = random_range(rng, kSize);
    uint64_t before = 0;
    for (uint64_t p = r.begin / 64; p <= (r.end - 1) / 64; ++p) before += page_writes[p];
    const uint64_t seen = v.version(r.begin, r.end);

    const int writes = static_cast<int>(rng() % 3);
    for (int k = 0; k < writes; ++k) {
      const Range w = random_range(rng, kSize);
      EXPECT_GT(v.wrote(w.begin, w.end), 0u);
      for (uint64_t p = w.begin / 64; p <= (w.end - 1) / 64; ++p) ++page_writes[p];
    }
    uint64_t after = 0;
    for (uint64_t p = r.begin / 64; p <= (r.end - 1) / 64; ++p) after += page_writes[p];
    const uint64_t now = v.version(r.begin, r.end);
    if (after == before) {
      ASSERT_EQ(now, seen) << "iteration " << iter << ": [" << r.begin << ", " << r.end << ")";
    } else {
      ASSERT_GT(now, seen) << "iteration " << iter << ": [" << r.begin << ", " << r.end << ")";
    }
  }
}

TEST(SramVersions, AWriteReturnsTheVersionItsPagesRead) {
  SramVersions v(64 * 1024);
  const uint64_t a = v.wrote(4096, 8192);  // a whole block
  EXPECT_EQ(v.version(4096, 8192), a);
  EXPECT_EQ(v.version(5000, 5001), a);
  const uint64_t b = v.wrote(5000, 5001);  // one page of it
  EXPECT_GT(b, a);
  EXPECT_EQ(v.version(4096, 8192), b);
  EXPECT_EQ(v.version(4096, 4160), a);
  EXPECT_EQ(v.wrote(10, 10), 0u);
}

}  // namespace
}  // namespace npu::emu::kern
