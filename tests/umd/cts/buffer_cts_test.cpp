// Conformance: buffer objects (allocation, mapping, access, lifetime).
#include <gmock/gmock.h>

#include <algorithm>
#include <numeric>

#include "cts.h"

namespace npu::cts {
namespace {

using ::testing::HasSubstr;

class BufferCts : public CtsTest {};
NPU_CTS_INSTANTIATE(BufferCts);

TEST_P(BufferCts, AllocateMapWriteRead) {
  auto b = Buffer::allocate(*device_, 1000);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_NE(b->handle(), 0u);
  EXPECT_NE(b->device_address(), 0u);
  EXPECT_EQ(b->size(), 1000u);
  EXPECT_GE(b->allocation_size(), 1000u);
  EXPECT_EQ(b->allocation_size() % 4096, 0u);
  EXPECT_TRUE(b->bytes().empty()) << "mapped lazily";

  auto m = b->map();
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->size(), 1000u);
  EXPECT_TRUE(std::all_of(m->begin(), m->end(), [](std::byte x) { return x == std::byte{0}; }))
      << "new buffers are zero-filled";
  EXPECT_EQ(b->bytes().data(), m->data());

  std::vector<std::byte> in(1000);
  for (size_t i = 0; i < in.size(); ++i) in[i] = std::byte(i * 7);
  ASSERT_TRUE(b->write(0, in));
  std::vector<std::byte> out(1000);
  ASSERT_TRUE(b->read(0, out));
  EXPECT_EQ(in, out);
}

TEST_P(BufferCts, BuffersGetDistinctNonOverlappingAddresses) {
  auto a = Buffer::allocate(*device_, 8192);
  auto b = Buffer::allocate(*device_, 100);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->handle(), b->handle());
  const bool disjoint = a->device_address() + a->allocation_size() <= b->device_address() ||
                        b->device_address() + b->allocation_size() <= a->device_address();
  EXPECT_TRUE(disjoint);
}

TEST_P(BufferCts, ZeroSizeFailsWithEinval) {
  auto b = Buffer::allocate(*device_, 0);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, EINVAL);
  EXPECT_THAT(b.error().message, HasSubstr("allocate: 0 bytes: BO_CREATE failed"));
}

TEST_P(BufferCts, AboveMaxSizeFailsWithEnomem) {
  auto b = Buffer::allocate(*device_, device_->params().max_bo_size + 1);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, ENOMEM);
}

TEST_P(BufferCts, OutOfRangeAccessFailsWithErange) {
  auto b = Buffer::allocate(*device_, 16);
  ASSERT_TRUE(b);
  std::vector<std::byte> data(8);
  auto w = b->write(12, data);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, ERANGE);
  auto r = b->read(17, std::span(data).first(0));
  ASSERT_FALSE(r);
}

TEST_P(BufferCts, MoveTransfersOwnership) {
  auto a = Buffer::allocate(*device_, 64);
  ASSERT_TRUE(a);
  const uint32_t handle = a->handle();
  Buffer b = std::move(*a);
  EXPECT_FALSE(*a);
  EXPECT_EQ(b.handle(), handle);
  EXPECT_TRUE(b.map());
  auto m = a->map();
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, EBADF);
}

TEST_P(BufferCts, CloseReleasesTheHandle) {
  auto b = Buffer::allocate(*device_, 64);
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->map());
  auto c = b->close();
  EXPECT_TRUE(c) << c.error().message;
  EXPECT_FALSE(*b);
  EXPECT_TRUE(b->close()) << "closing twice is a no-op";
}

TEST_P(BufferCts, OutlivesItsDeviceHandle) {
  std::optional<Buffer> b;
  {
    auto dev = Device::open_with(kernel_, GetParam().path);
    ASSERT_TRUE(dev);
    auto a = Buffer::allocate(*dev, 64);
    ASSERT_TRUE(a);
    b.emplace(std::move(*a));
  }  // the Device handle is gone; the file stays open for the Buffer
  std::vector<std::byte> data(64, std::byte{5});
  EXPECT_TRUE(b->write(0, data));
  EXPECT_TRUE(b->close());
}

TEST_P(BufferCts, FixedVaPlacesTheBuffer) {
  const auto& va = device_->params().va_range;
  if (!va) GTEST_SKIP() << "the kernel does not report the VA range (no FIXED_VA support yet)";
  const uint64_t at = va->start + 64 * va->align;
  auto b = Buffer::allocate(*device_, 4096, {.fixed_va = at});
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->device_address(), at);
  auto clash = Buffer::allocate(*device_, 4096, {.fixed_va = at});
  ASSERT_FALSE(clash);
  EXPECT_EQ(clash.error().code, EEXIST);
}

}  // namespace
}  // namespace npu::cts
