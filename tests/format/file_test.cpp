// Whole-file I/O: read_file, write_file (one buffer or pieces, atomically) and MappedFile, with
// errors that name the path.
#include "npu/format/file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>
#include "bytes_of.h"

namespace npu::format {
namespace {

namespace fs = std::filesystem;

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("npu_file_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

using test::bytes_of;

TEST_F(FileTest, PiecesAreWrittenInOrderAndReadBackWholeOrMapped) {
  const auto a = bytes_of("head:"), b = bytes_of(""), c = bytes_of("tail");
  const std::span<const std::byte> pieces[] = {a, b, c};
  ASSERT_TRUE(write_file(path("x.bin"), pieces));
  EXPECT_FALSE(fs::exists(path("x.bin") + ".tmp." + std::to_string(::getpid())));
  auto read = read_file(path("x.bin"));
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(*read, bytes_of("head:tail"));
  auto mapped = MappedFile::open(path("x.bin"));
  ASSERT_TRUE(mapped) << mapped.error().message;
  const auto m = mapped->bytes();
  EXPECT_EQ(std::vector<std::byte>(m.begin(), m.end()), bytes_of("head:tail"));
  MappedFile moved = std::move(*mapped);  // the mapping moves; the moved-from one owns none
  EXPECT_EQ(moved.bytes().size(), 9u);
}

TEST_F(FileTest, LargeFileReadsAndMapsWhole) {
  std::vector<std::byte> big(3 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::byte>(i * 131 + 7);
  ASSERT_TRUE(write_file(path("big.bin"), big));
  auto read = read_file(path("big.bin"));
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, big);
  auto mapped = MappedFile::open(path("big.bin"));
  ASSERT_TRUE(mapped);
  EXPECT_TRUE(std::equal(big.begin(), big.end(), mapped->bytes().begin(), mapped->bytes().end()));
}

TEST_F(FileTest, EmptyFileMapsToNoBytes) {
  ASSERT_TRUE(write_file(path("empty"), std::span<const std::byte>{}));
  auto mapped = MappedFile::open(path("empty"));
  ASSERT_TRUE(mapped) << mapped.error().message;
  EXPECT_TRUE(mapped->bytes().empty());
  auto read = read_file(path("empty"));
  ASSERT_TRUE(read);
  EXPECT_TRUE(read->empty());
}

TEST_F(FileTest, ErrorsNameThePathAndTheReason) {
  auto missing = MappedFile::open(path("none.onnx"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("none.onnx: cannot open: No such file or directory"),
            std::string::npos)
      << missing.error().message;
  auto dir = MappedFile::open(dir_.string());
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("not a regular file"), std::string::npos);
  const auto a = bytes_of("x");
  const std::span<const std::byte> pieces[] = {a};
  auto bad = write_file(path("no/such/dir/x.bin"), pieces);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("x.bin: cannot create"), std::string::npos);
}

}  // namespace
}  // namespace npu::format
