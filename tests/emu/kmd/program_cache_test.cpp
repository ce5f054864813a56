// ProgramCache (emu/kmd/program_cache.h): the same command-buffer bytes get the same validated
// program (one validation, one id); other bytes, another; a buffer the validator refuses is
// refused again with its message; the cache holds at most kEntries programs; find() gives a
// kept program for bytes compared where they lie (header and commands), which later writes to
// them do not change.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "npu/isa/builder.h"
#include "program_cache.h"

namespace npu::emu::kmd {
namespace {

/// A valid command buffer of `nops` NOPs on the command processor.
std::vector<std::byte> nops(uint32_t n) {
  isa::CommandBufferBuilder b;
  for (uint32_t i = 0; i < n; ++i) {
    npu_cmd c{};
    c.hdr.opcode = NPU_OP_NOP;
    c.hdr.engine = NPU_ENGINE_CP;
    b.add(c);
  }
  return b.finish();
}

TEST(ProgramCache, TheSameBytesGetTheSameProgramValidatedOnce) {
  ProgramCache cache;
  const isa::DeviceConfig cfg;
  const std::vector<std::byte> a = nops(3), b = nops(4);
  auto first = cache.validate(a, cfg);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  auto again = cache.validate(std::vector<std::byte>(a), cfg);  // equal bytes, another copy
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->get(), first->get());
  EXPECT_NE((*first)->id, 0u);
  EXPECT_EQ(cache.validated(), 1u);

  auto other = cache.validate(b, cfg);
  ASSERT_TRUE(other.has_value());
  EXPECT_NE((*other)->id, (*first)->id);
  EXPECT_EQ((*other)->cmds.size(), 5u);
  EXPECT_EQ(cache.validated(), 2u);
}

TEST(ProgramCache, FindComparesInPlaceAndHandsOutItsOwnCopy) {
  ProgramCache cache;
  const isa::DeviceConfig cfg;
  std::vector<std::byte> bo = nops(3);  // the submitter's buffer
  EXPECT_EQ(cache.find(bo), nullptr) << "nothing kept yet";
  auto validated = cache.validate(bo, cfg);
  ASSERT_TRUE(validated.has_value()) << validated.error().message;
  const std::shared_ptr<const isa::Program> found = cache.find(bo);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found.get(), validated->get());
  EXPECT_EQ(cache.validated(), 1u) << "a find is not a validation";
  // The submitter rewrites its buffer: the kept program is unchanged, and the new bytes are
  // not found.
  const npu_cmd before = found->cmds.at(1);
  for (size_t i = sizeof(npu_cmdbuf_header); i < bo.size(); ++i) bo[i] = std::byte{0x7f};
  EXPECT_EQ(std::memcmp(&found->cmds.at(1), &before, sizeof before), 0);
  EXPECT_EQ(cache.find(bo), nullptr);
}

// The header is part of the bytes: a buffer whose commands equal a kept program's but whose
// header differs (an older minor version, still valid) is another program.
TEST(ProgramCache, AnotherHeaderIsAnotherProgram) {
  ProgramCache cache;
  const isa::DeviceConfig cfg;
  const std::vector<std::byte> a = nops(2);
  std::vector<std::byte> b = a;
  npu_cmdbuf_header h;
  std::memcpy(&h, b.data(), sizeof h);
  ASSERT_GT(h.version_minor, 0u);
  h.version_minor = 0;
  std::memcpy(b.data(), &h, sizeof h);
  auto first = cache.validate(a, cfg);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  EXPECT_EQ(cache.find(b), nullptr);
  auto second = cache.validate(b, cfg);
  ASSERT_TRUE(second.has_value()) << second.error().message;
  EXPECT_NE(second->get(), first->get());
  EXPECT_EQ(cache.validated(), 2u);
  EXPECT_EQ((*second)->header.version_minor, 0u);
  EXPECT_EQ(cache.find(a).get(), first->get());
}

TEST(ProgramCache, ARefusedBufferIsRefusedAgain) {
  ProgramCache cache;
  const isa::DeviceConfig cfg;
  isa::CommandBufferBuilder builder;
  npu_cmd raw{};
  raw.hdr.opcode = 0x7f;
  builder.add(raw);
  const std::vector<std::byte> bad = builder.finish();
  for (int i = 0; i < 2; ++i) {
    auto r = cache.validate(bad, cfg);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, EINVAL);
    EXPECT_NE(r.error().message.find("command 0"), std::string::npos) << r.error().message;
  }
  EXPECT_EQ(cache.validated(), 2u);
}

TEST(ProgramCache, TheLeastRecentlyUsedGoFirst) {
  ProgramCache cache;
  const isa::DeviceConfig cfg;
  const std::vector<std::byte> kept = nops(1);
  ASSERT_TRUE(cache.validate(kept, cfg).has_value());
  for (uint32_t n = 2; n < 2 + ProgramCache::kEntries; ++n) {
    ASSERT_TRUE(cache.validate(nops(n), cfg).has_value());
    ASSERT_TRUE(cache.validate(kept, cfg).has_value());  // used again: stays
  }
  EXPECT_EQ(cache.validated(), 1 + ProgramCache::kEntries);
  // nops(2) was used least recently and is gone: validated again.
  ASSERT_TRUE(cache.validate(nops(2), cfg).has_value());
  EXPECT_EQ(cache.validated(), 2 + ProgramCache::kEntries);
}

}  // namespace
}  // namespace npu::emu::kmd
