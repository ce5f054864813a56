// Corruption fuzz of model packages: random bit flips, byte overwrites and truncations of a
// valid package must give an Error or (when the damage is invisible) an identical parse; with
// the checksum resealed (so the damage reaches the layout and JSON checks) every successful
// parse must re-serialize to a package that parses back equal. Never a crash (ASan/UBSan run
// this in CI).
#include <gtest/gtest.h>

#include <random>

#include "sample_package.h"

namespace npu::format {
namespace {

enum class Mode { kRaw, kResealed };

std::vector<std::byte> mutate(const std::vector<std::byte>& good, std::mt19937& rng, Mode mode) {
  auto b = good;
  const int kind = int(rng() % 4);
  if (kind == 0 && !b.empty()) {
    b.resize(rng() % b.size());
  } else {
    const int n = 1 + int(rng() % 4);
    for (int i = 0; i < n && !b.empty(); ++i) {
      const size_t at = rng() % b.size();
      if (kind == 1) {
        b[at] ^= std::byte(uint8_t(1u << (rng() % 8)));
      } else if (kind == 2) {
        b[at] = std::byte(uint8_t(rng()));
      } else {
        // Header and section table fields: small integer edits.
        const size_t off = rng() % std::min<size_t>(b.size(), 64 + 3 * section_entry::kEntrySize);
        b[off] = std::byte(uint8_t(static_cast<uint8_t>(b[off]) + 1 + rng() % 3));
      }
    }
  }
  if (mode == Mode::kResealed) seal_package(b);
  return b;
}

void fuzz(Mode mode, uint32_t seed) {
  const Package good = testing::sample_package();
  auto bytes = serialize_package(good);
  ASSERT_TRUE(bytes) << bytes.error().message;
  const isa::DeviceConfig cfg;
  std::mt19937 rng(seed);
  int accepted = 0;
  for (int i = 0; i < 5000; ++i) {
    const auto b = mutate(*bytes, rng, mode);
    auto p = parse_package(b, "fuzz.npub", (i % 2) ? &cfg : nullptr);
    if (!p) {
      ASSERT_EQ(p.error().message.rfind("fuzz.npub: ", 0), 0u) << p.error().message;
      continue;
    }
    ++accepted;
    if (mode == Mode::kRaw) {
      ASSERT_EQ(*p, good) << "iteration " << i;
    } else {
      auto again = serialize_package(*p);
      ASSERT_TRUE(again) << "iteration " << i << ": " << again.error().message;
      auto q = parse_package(*again, "fuzz.npub");
      ASSERT_TRUE(q) << "iteration " << i << ": " << q.error().message;
      ASSERT_EQ(*q, *p) << "iteration " << i;
    }
  }
  ::testing::Test::RecordProperty("accepted", accepted);
}

TEST(PackageFuzz, CorruptionIsDetected) {
  fuzz(Mode::kRaw, 1234);
}
TEST(PackageFuzz, ResealedCorruptionNeverCrashes) {
  fuzz(Mode::kResealed, 5678);
}

TEST(PackageFuzz, MetadataTextMutations) {
  const Package good = testing::sample_package();
  const std::string text = metadata_to_json(good.metadata);
  std::mt19937 rng(42);
  const char alphabet[] = "{}[]\":,0123456789-eE.truefalsnl \\u";
  for (int i = 0; i < 5000; ++i) {
    std::string t = text;
    const int n = 1 + int(rng() % 3);
    for (int k = 0; k < n; ++k) {
      const size_t at = rng() % t.size();
      switch (rng() % 3) {
        case 0:
          t[at] = alphabet[rng() % (sizeof(alphabet) - 1)];
          break;
        case 1:
          t.erase(at, 1 + rng() % 8);
          break;
        default:
          t.insert(at, 1, alphabet[rng() % (sizeof(alphabet) - 1)]);
      }
    }
    auto p = parse_package(assemble_package(t, good.sections), "fuzz.npub");
    if (p) {
      auto again = serialize_package(*p);
      ASSERT_TRUE(again) << again.error().message;
    } else {
      ASSERT_EQ(p.error().message.rfind("fuzz.npub: ", 0), 0u) << p.error().message;
    }
  }
}

}  // namespace
}  // namespace npu::format
