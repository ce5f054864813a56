// .npz archives: the fixtures written exactly as np.savez and np.savez_compressed write them
// (data/make_npz.py: ZIP64 local headers, stored and deflated members), the writer's round
// trip, and a one-line error for every malformed archive.
#include "npu/format/npz.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "npu/format/crc32.h"

namespace npu::format {
namespace {

const std::filesystem::path kData = std::filesystem::path(NPU_FORMAT_TEST_DATA);

void expect_fixture(const std::map<std::string, NpyArray>& a) {
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a.at("x").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.at("x").values<float>(), (std::vector<float>{0, 0.5f, 1, 1.5f, 2, 2.5f}));
  EXPECT_EQ(a.at("idx").values<int64_t>(), (std::vector<int64_t>{1, -2, 3, -4}));
  EXPECT_TRUE(a.at("q").shape.empty());
  EXPECT_EQ(a.at("q").values<int8_t>(), (std::vector<int8_t>{-7}));
}

TEST(Npz, ReadsNumpySavez) {
  auto a = read_npz((kData / "savez.npz").string());
  ASSERT_TRUE(a) << a.error().message;
  expect_fixture(*a);
}

TEST(Npz, ReadsNumpySavezCompressed) {
  auto a = read_npz((kData / "savez_compressed.npz").string());
  ASSERT_TRUE(a) << a.error().message;
  expect_fixture(*a);
}

TEST(Npz, WriterRoundTripsStoredAndDeflated) {
  std::map<std::string, NpyArray> in;
  std::vector<float> big(5000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 7);
  in["w"] = NpyArray::of<float>({50, 100}, big);
  in["b"] = NpyArray::of<int32_t>({2}, std::vector<int32_t>{3, -3});
  for (bool compress : {false, true}) {
    auto bytes = serialize_npz(in, compress);
    ASSERT_TRUE(bytes) << bytes.error().message;
    if (compress) {
      EXPECT_LT(bytes->size(), 5000u);
    }
    auto out = parse_npz(*bytes, "mem.npz");
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ(*out, in);
  }
  auto empty = parse_npz(*serialize_npz({}), "empty.npz");
  ASSERT_TRUE(empty) << empty.error().message;
  EXPECT_TRUE(empty->empty());
}

// Offsets in the writer's stored archive of one member "a.npy" (name 5 bytes).
struct Stored {
  std::vector<std::byte> bytes;
  size_t central = 0;  // offset of the central header
  size_t data = 0;     // offset of the member's data
  size_t size = 0;     // the member's size (a stored .npy file)
};
Stored stored_one(const std::string& key = "a") {
  Stored s;
  const auto a = NpyArray::of<float>({2}, std::vector<float>{1, 2});
  s.bytes = *serialize_npz({{key, a}});
  s.data = 30 + key.size() + 4;
  s.size = serialize_npy(a).size();
  s.central = s.bytes.size() - 22 - (46 + key.size() + 4);
  return s;
}

std::string error_of(std::span<const std::byte> bytes) {
  auto r = parse_npz(bytes, "p.npz");
  EXPECT_FALSE(r);
  if (r) return {};
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  return r.error().message;
}

TEST(Npz, MalformedArchivesGiveOneLineErrors) {
  const std::string text = "definitely not a zip archive";
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  EXPECT_EQ(error_of({p, text.size()}),
            "p.npz: not an .npz file (no ZIP end of central directory record)");
  EXPECT_EQ(error_of({p, 4}), "p.npz: not an .npz file (too short for a ZIP archive)");

  Stored s = stored_one();
  auto crc = s.bytes;
  crc[s.data + s.size - 1] ^= std::byte{0x40};
  EXPECT_EQ(error_of(crc), "p.npz: member 'a.npy': CRC-32 mismatch (the archive is corrupt)");

  auto method = s.bytes;
  method[s.central + 10] = std::byte{12};
  EXPECT_EQ(error_of(method),
            "p.npz: member 'a.npy': compression method 12 is not supported (np.savez stores, "
            "np.savez_compressed deflates)");

  auto encrypted = s.bytes;
  encrypted[s.central + 8] = std::byte{1};
  EXPECT_EQ(error_of(encrypted), "p.npz: member 'a.npy': encrypted members are not supported");

  auto local = s.bytes;
  local[0] = std::byte{0};
  EXPECT_EQ(error_of(local), "p.npz: member 'a.npy': local header is missing or damaged");

  auto truncated = std::vector<std::byte>(s.bytes.begin() + 40, s.bytes.end());
  EXPECT_NE(error_of(truncated).find("p.npz: "), std::string::npos);

  auto text_member = *serialize_npz({{"a", NpyArray::of<float>({1}, std::vector<float>{1})}});
  // Rename the member "a.npy" -> "a.txt" in both headers.
  for (size_t i = 0; i + 5 <= text_member.size(); ++i) {
    if (std::memcmp(text_member.data() + i, "a.npy", 5) == 0) {
      std::memcpy(text_member.data() + i + 2, "txt", 3);
    }
  }
  EXPECT_EQ(error_of(text_member),
            "p.npz: member 'a.txt': not a .npy member (an .npz holds NAME.npy files)");

  auto bad_npy = s.bytes;
  bad_npy[s.data] = std::byte{'X'};  // the .npy magic; the CRC is fixed below
  const uint32_t crc_new = crc32(std::span(bad_npy).subspan(s.data, s.size));
  for (size_t at : {size_t{14}, s.central + 16}) {
    for (int i = 0; i < 4; ++i)
      bad_npy[at + i] = static_cast<std::byte>((crc_new >> (8 * i)) & 0xff);
  }
  EXPECT_NE(error_of(bad_npy).find("p.npz: member 'a.npy': "), std::string::npos);

  auto missing = read_npz("/nonexistent/p.npz");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nonexistent/p.npz"), std::string::npos);
}

}  // namespace
}  // namespace npu::format
