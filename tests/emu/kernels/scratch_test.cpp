// Scratch<T> (scratch.h): a thread finds its freed blocks again, live leases never share
// memory, oversized blocks are not kept, and each thread has its own list.
#include "scratch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

namespace npu::emu::kern {
namespace {

TEST(Scratch, ABlockGivenBackIsTakenAgainForTheSameSize) {
  std::thread t([] {  // a thread with an empty free list
    const void* first = nullptr;
    {
      Scratch<float> s(1000);
      first = s.get();
    }
    EXPECT_EQ(scratch_kept_bytes(), 4000u);  // kept, not freed
    Scratch<float> again(1000);
    EXPECT_EQ(scratch_kept_bytes(), 0u);  // taken from the list
    EXPECT_EQ(again.get(), first);
  });
  t.join();
}

TEST(Scratch, LiveLeasesDoNotOverlap) {
  Scratch<int32_t> a(256), b(256), c(64);
  for (size_t i = 0; i < 256; ++i) a[i] = 1, b[i] = 2;
  for (size_t i = 0; i < 64; ++i) c[i] = 3;
  for (size_t i = 0; i < 256; ++i) ASSERT_TRUE(a[i] == 1 && b[i] == 2);
}

TEST(Scratch, ASmallerFreeBlockIsNotHandedOutForALargerLease) {
  { Scratch<std::byte> small(128); }
  Scratch<std::byte> big(1 << 20);
  for (size_t i = 0; i < (1 << 20); ++i) big[i] = std::byte{7};  // ASan: all of it is ours
  EXPECT_EQ(big[(1 << 20) - 1], std::byte{7});
}

TEST(Scratch, BlocksAboveTheLimitAreNotKept) {
  std::thread t([] {  // a thread with an empty free list
    { Scratch<std::byte> s(kScratchMaxBlockBytes + 4096); }
    EXPECT_EQ(scratch_kept_bytes(), 0u);
    { Scratch<std::byte> s(4096); }
    EXPECT_EQ(scratch_kept_bytes(), 4096u);
  });
  t.join();
}

TEST(Scratch, EachThreadHasItsOwnList) {
  const void* mine = nullptr;
  {
    Scratch<float> s(5000);
    mine = s.get();
  }
  const void* theirs = nullptr;
  std::thread t([&] {
    Scratch<float> s(5000);  // cannot be this thread's freed block
    theirs = s.get();
  });
  t.join();
  EXPECT_NE(theirs, mine);
  Scratch<float> back(5000);
  EXPECT_EQ(back.get(), mine);
}

}  // namespace
}  // namespace npu::emu::kern
