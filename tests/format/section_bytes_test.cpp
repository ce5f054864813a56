// Section bytes and their lifetime: a Package read from a file is a view of the mapping and
// keeps it alive however long the Package (or any copy) lives; a Package parsed from plain
// bytes owns copies; an owner passed to parse_package() is shared by every viewing section.
// Under AddressSanitizer, one test shows that a view without an owner would be caught.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "npu/format/file.h"
#include "npu/format/package.h"
#include "sample_package.h"

namespace npu::format {
namespace {

using testing::sample_package;

bool within(std::span<const std::byte> inner, std::span<const std::byte> outer) {
  return inner.data() >= outer.data() && inner.data() + inner.size() <= outer.data() + outer.size();
}

TEST(SectionBytes, OwnedCopiesShareAndCompareByContents) {
  const std::vector<std::byte> v{std::byte{1}, std::byte{2}, std::byte{3}};
  SectionBytes a(v);
  EXPECT_NE(a.data(), v.data());  // the vector was copied in, not referred to
  const SectionBytes b = a;
  EXPECT_EQ(b.data(), a.data());  // copies share the bytes
  EXPECT_EQ(b.owner(), a.owner());
  // Equality is about contents: an equal view of other memory compares equal.
  const auto other = std::make_shared<const std::vector<std::byte>>(v);
  const SectionBytes view(*other, other);
  EXPECT_EQ(view, a);
  EXPECT_NE(SectionBytes(std::vector{std::byte{1}, std::byte{2}, std::byte{4}}), a);
  // A moved-from object is empty rather than a view of memory it no longer keeps alive.
  SectionBytes c = a;
  SectionBytes d = std::move(c);
  EXPECT_TRUE(c.empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(c.data(), nullptr);
  EXPECT_EQ(d, a);
}

TEST(SectionBytes, ReadPackageOutlivesFileAndMapping) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("npub_views_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "m.npub").string();
  const Package want = sample_package();
  ASSERT_TRUE(write_package(path, want));

  std::optional<Package> copy;
  {
    auto p = read_package(path);
    ASSERT_TRUE(p) << p.error().message;
    copy = *p;
    // Constants and extra sections are views of one mapping (no copy); the command buffer is
    // a copy of its own.
    const Package& q = *p;
    ASSERT_EQ(q.sections.size(), 3u);
    ASSERT_TRUE(q.sections[1].data.owner());
    EXPECT_EQ(q.sections[1].data.owner(), q.sections[2].data.owner());
    EXPECT_NE(q.sections[0].data.owner(), q.sections[1].data.owner());
    // Sections of a package written by write_package() are 64-byte aligned in the mapping.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(q.sections[1].data.data()) % kSectionAlign, 0u);
  }  // the Package read_package() returned is gone; only the copy holds the mapping now
  std::filesystem::remove_all(dir);  // and the file itself is gone too

  // Reading the views would fault if the mapping had been unmapped with the first Package.
  EXPECT_EQ(*copy, want);
  Package moved = std::move(*copy);
  copy.reset();
  EXPECT_EQ(moved, want);
  EXPECT_EQ(moved.sections[1].data.owner().use_count(), 2);  // constants and extra share it
  // And it serializes back to the same bytes as the package it was written from.
  auto a = serialize_package(moved);
  auto b = serialize_package(want);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
}

TEST(SectionBytes, ParseFromBytesCopies) {
  auto serialized = serialize_package(sample_package());
  ASSERT_TRUE(serialized);
  auto bytes = std::make_unique<std::vector<std::byte>>(std::move(*serialized));
  auto p = parse_package(*bytes, "model.npub");
  ASSERT_TRUE(p) << p.error().message;
  for (const Section& s : p->sections) EXPECT_FALSE(within(s.data.span(), *bytes)) << s.name;
  // Overwrite and free the input: the Package does not depend on it.
  std::fill(bytes->begin(), bytes->end(), std::byte{0xee});
  bytes.reset();
  EXPECT_EQ(*p, sample_package());
}

TEST(SectionBytes, ParseWithOwnerSharesIt) {
  auto bytes = serialize_package(sample_package());
  ASSERT_TRUE(bytes);
  auto owned = std::make_shared<const std::vector<std::byte>>(std::move(*bytes));
  const std::span<const std::byte> span = *owned;
  auto p = parse_package(span, owned, "model.npub");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_FALSE(within(p->sections[0].data.span(), span));  // the command buffer is copied
  EXPECT_TRUE(within(p->sections[1].data.span(), span));   // constants are a view
  EXPECT_TRUE(within(p->sections[2].data.span(), span));
  EXPECT_EQ(owned.use_count(), 3);  // this test and the two viewing sections
  owned.reset();                    // the Package alone keeps the bytes now
  EXPECT_EQ(*p, sample_package());
}

#if defined(__SANITIZE_ADDRESS__)
#define NPU_HAS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NPU_HAS_ASAN 1
#endif
#endif

// The ownership above is what makes views safe: a view whose owner does not keep its bytes
// alive dangles, and AddressSanitizer reports the read (this is what the other tests would
// hit under ASan if a section outlived its bytes).
TEST(SectionBytesDeathTest, AsanCatchesADanglingView) {
#ifndef NPU_HAS_ASAN
  GTEST_SKIP() << "needs an AddressSanitizer build (-DNPU_SANITIZE=address)";
#else
  auto dangling = [] {
    auto v = std::make_unique<std::vector<std::byte>>(64, std::byte{7});
    const SectionBytes view(*v, nullptr);  // wrong: nothing keeps *v alive
    v.reset();
    volatile auto b = view[3];
    (void)b;
  };
  EXPECT_DEATH(dangling(), "heap-use-after-free");
#endif
}

}  // namespace
}  // namespace npu::format
