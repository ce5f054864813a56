// .npy reader/writer: byte-exact vectors built by hand from the NumPy format spec, round trips
// for every dtype and shape class, and one test per class of malformed file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "bytes_of.h"
#include "npu/format/npy.h"

namespace npu::format {
namespace {

using test::bytes_of;

// "\x93NUMPY", version 1.0, header length 118 ('v'), the dict, space padding, '\n': 128 bytes
// of preamble+header, as np.save writes it.
std::string v1_file(const std::string& dict, const std::string& data) {
  std::string header = dict;
  header.resize(117, ' ');
  header += '\n';
  return std::string("\x93NUMPY\x01\x00\x76\x00", 10) + header + data;
}

Expected<NpyArray> parse(const std::string& s) {
  return parse_npy(bytes_of(s), "x.npy");
}

std::string parse_error(const std::string& s) {
  auto r = parse(s);
  EXPECT_FALSE(r.has_value());
  return r ? std::string() : r.error().message;
}

TEST(Npy, HandMadeInt32Vector) {
  const std::string data("\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00", 12);
  const std::string file =
      v1_file("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", data);
  ASSERT_EQ(file.size(), 128u + 12u);
  auto a = parse(file);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->dtype, DType::kInt32);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(a->values<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
  // The writer reproduces NumPy's bytes exactly.
  EXPECT_EQ(serialize_npy(*a), bytes_of(file));
}

TEST(Npy, HandMadeFloat32Matrix) {
  const std::string data("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x60\x40\x00\x00\x80\xbf", 16);
  const std::string file =
      v1_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", data);
  auto a = parse(file);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a->values<float>(), (std::vector<float>{1.0f, 2.0f, 3.5f, -1.0f}));
  EXPECT_EQ(serialize_npy(*a), bytes_of(file));
}

TEST(Npy, HandMadeScalarAndBool) {
  const std::string f8("\x00\x00\x00\x00\x00\x00\xf8\x3f", 8);
  const std::string scalar = v1_file("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f8);
  auto s = parse(scalar);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(s->shape.empty());
  EXPECT_EQ(s->num_elements(), 1);
  EXPECT_EQ(s->values<double>(), (std::vector<double>{1.5}));
  EXPECT_EQ(serialize_npy(*s), bytes_of(scalar));

  const std::string b = v1_file("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                                std::string("\x01\x00", 2));
  auto a = parse(b);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->values<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ(serialize_npy(*a), bytes_of(b));
}

TEST(Npy, Version2And3Headers) {
  std::string dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }";
  dict.resize(115, ' ');
  dict += '\n';  // 12 + 116 = 128
  for (char major : {'\x02', '\x03'}) {
    std::string file = std::string("\x93NUMPY", 6) + major +
                       std::string("\x00\x74\x00\x00\x00", 5) + dict + "\x07\x09";
    auto a = parse(file);
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_EQ(a->values<uint8_t>(), (std::vector<uint8_t>{7, 9}));
  }
}

TEST(Npy, LenientHeaderSyntax) {
  // Any key order, double quotes, no trailing comma, odd whitespace, Python 2 longs, '(3)'.
  for (const std::string dict : {
           "{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"<i2\"}",
           "{ 'fortran_order' :False,'shape':( 3 , ) ,'descr':'<i2' , }",
           "{'descr': '<i2', 'fortran_order': False, 'shape': (3L,), }",
           "{'descr':'<i2','fortran_order':False,'shape':(3)}",
           "{'descr': 'i2', 'fortran_order': False, 'shape': (3,),\t}",
       }) {
    auto a = parse(v1_file(dict, std::string("\x01\x00\x02\x00\xff\xff", 6)));
    ASSERT_TRUE(a) << dict << ": " << a.error().message;
    EXPECT_EQ(a->values<int16_t>(), (std::vector<int16_t>{1, 2, -1})) << dict;
  }
}

TEST(Npy, FortranOrderAcceptedWhenLayoutIsTheSame) {
  auto a = parse(
      v1_file("{'descr': '<i4', 'fortran_order': True, 'shape': (1, 2), }", std::string(8, '\0')));
  ASSERT_TRUE(a) << a.error().message;
}

template <typename T>
void round_trip(std::vector<int64_t> shape, std::vector<T> values) {
  const NpyArray a = NpyArray::of<T>(shape, values);
  auto b = parse_npy(serialize_npy(a), "rt.npy");
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(*b, a);
  EXPECT_EQ(b->values<T>(), values);
  const auto bytes = serialize_npy(a);
  EXPECT_EQ((bytes.size() - a.data.size()) % 64, 0u);
  EXPECT_EQ(bytes[bytes.size() - a.data.size() - 1], std::byte{'\n'});
}

TEST(Npy, RoundTripEveryDtype) {
  round_trip<bool>({2, 2}, {true, false, false, true});
  round_trip<int8_t>({3}, {-128, 0, 127});
  round_trip<uint8_t>({1, 3}, {0, 128, 255});
  round_trip<int16_t>({2}, {-32768, 32767});
  round_trip<uint16_t>({2}, {0, 65535});
  round_trip<int32_t>({2, 1, 1, 2}, {1, -2, 3, INT32_MIN});
  round_trip<uint32_t>({1}, {UINT32_MAX});
  round_trip<int64_t>({2}, {INT64_MIN, INT64_MAX});
  round_trip<uint64_t>({1}, {UINT64_MAX});
  round_trip<float>({1, 2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10.5f, -11});
  round_trip<double>({}, {3.25});
}

TEST(Npy, RoundTripEmptyAndZeroDim) {
  round_trip<float>({0}, {});
  round_trip<float>({2, 0, 3}, {});
  round_trip<int8_t>({}, {5});
  const NpyArray f16 = NpyArray::zeros(DType::kFloat16, {4});
  auto b = parse_npy(serialize_npy(f16), "h.npy");
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(*b, f16);
}

TEST(Npy, TypedViewsCheckTheDtype) {
  NpyArray a = NpyArray::of<float>({2}, std::vector<float>{1, 2});
  EXPECT_TRUE(a.holds<float>());
  EXPECT_TRUE(a.view<int32_t>().empty());
  a.view<float>()[1] = 7;
  EXPECT_EQ(a.values<float>(), (std::vector<float>{1, 7}));
}

TEST(Npy, FileRoundTripAndErrors) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("npy_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "a.npy").string();
  const NpyArray a = NpyArray::of<int64_t>({2, 2}, std::vector<int64_t>{1, 2, 3, 4});
  ASSERT_TRUE(write_npy(path, a));
  auto b = read_npy(path);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(*b, a);

  auto missing = read_npy((dir / "nope.npy").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ENOENT);
  EXPECT_NE(missing.error().message.find("nope.npy: cannot open"), std::string::npos);
  auto directory = read_npy(dir.string());
  ASSERT_FALSE(directory);
  EXPECT_NE(directory.error().message.find("not a regular file"), std::string::npos);

  NpyArray bad = a;
  bad.data.pop_back();
  auto w = write_npy(path, bad);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("needs 32 bytes, array has 31"), std::string::npos);
  std::filesystem::remove_all(dir);
}

struct BadCase {
  const char* what;
  std::string file;
  const char* message;
};

TEST(Npy, MalformedFilesAreRejectedClearly) {
  const std::string four(4, '\0');
  auto f = [](const std::string& dict, const std::string& data = std::string(4, '\0')) {
    return v1_file(dict, data);
  };
  const std::vector<BadCase> cases = {
      {"empty", "", "x.npy: not a .npy file"},
      {"bad magic", "\x93NUMPX\x01\x00\x00\x00", "not a .npy file"},
      {"short preamble", std::string("\x93NUMPY\x01", 7), "truncated .npy preamble"},
      {"version 4", std::string("\x93NUMPY\x04\x00\x00\x00", 10),
       "unsupported .npy format version 4.0"},
      {"version 1.1", std::string("\x93NUMPY\x01\x01\x00\x00", 10), "version 1.1"},
      {"header beyond file", std::string("\x93NUMPY\x01\x00\xff\x00{}", 12),
       "header length 255 beyond file size 12"},
      {"v2 short length", std::string("\x93NUMPY\x02\x00\x00\x00", 10), "need 12"},
      {"not a dict", f("['descr']"), "expected '{'"},
      {"unterminated", f("{'descr': '<f4"), "unterminated string"},
      {"missing descr", f("{'fortran_order': False, 'shape': (1,), }"), "missing key 'descr'"},
      {"missing shape", f("{'descr': '<f4', 'fortran_order': False, }"), "missing key 'shape'"},
      {"missing fortran", f("{'descr': '<f4', 'shape': (1,), }"), "missing key 'fortran_order'"},
      {"unknown key", f("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}"),
       "unexpected key 'x'"},
      {"duplicate key", f("{'descr': '<f4', 'descr': '<f4', }"), "duplicate key 'descr'"},
      {"fortran",
       f("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", std::string(16, '\0')),
       "fortran_order True is not supported"},
      {"fortran not bool", f("{'descr': '<f4', 'fortran_order': 'no', 'shape': (1,), }"),
       "'fortran_order' must be True or False"},
      {"big endian", f("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }"),
       "big-endian data is not supported"},
      {"structured", f("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }"),
       "structured dtypes"},
      {"object", f("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"),
       "object arrays are not supported"},
      {"complex", f("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }"),
       "unsupported dtype"},
      {"pipe on f4", f("{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }"),
       "only valid for 1-byte"},
      {"negative dim", f("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"),
       "negative dimension"},
      {"leading zero (NumPy refuses it)",
       f("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 028, 28), }"),
       "leading zero in a dimension of shape"},
      {"shape not tuple", f("{'descr': '<f4', 'fortran_order': False, 'shape': 3, }"),
       "unsupported value for 'shape'"},
      {"shape list", f("{'descr': '<f4', 'fortran_order': False, 'shape': [1], }"),
       "unsupported value for 'shape'"},
      {"huge dim",
       f("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"),
       "dimension too large"},
      {"overflowing shape",
       f("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }"),
       "is too large"},
      {"truncated data", f("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"),
       "needs 8 bytes, file has 4 (truncated)"},
      {"trailing data",
       f("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", std::string(6, '\0')),
       "(trailing bytes)"},
      {"text after dict", f("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } x"),
       "unexpected text after the header dict"},
      {"nul in header", f(std::string("{'descr': '<f4',\0 }", 19)), "invalid byte 0x00"},
      {"bool value 2",
       f("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }",
         std::string("\x00\x01\x02\x00", 4)),
       "bool element 2 has value 2"},
      {"escape", f("{'descr': '<\\x66', }"), "escape sequences"},
      {"missing colon", f("{'descr' '<f4'}"), "expected ':'"},
      {"missing comma", f("{'descr': '<f4' 'shape': (1,)}"), "expected ',' or '}'"},
  };
  for (const BadCase& c : cases) {
    const std::string msg = parse_error(c.file);
    EXPECT_NE(msg.find(c.message), std::string::npos) << c.what << ": got \"" << msg << "\"";
    EXPECT_EQ(msg.rfind("x.npy: ", 0), 0u) << c.what << ": " << msg;
  }
}

TEST(Npy, TruncationNeverCrashes) {
  const NpyArray a = NpyArray::of<float>({3, 2}, std::vector<float>{1, 2, 3, 4, 5, 6});
  const auto bytes = serialize_npy(a);
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = parse_npy(std::span(bytes).first(n), "t.npy");
    EXPECT_FALSE(r) << n;
  }
  uint32_t seed = 1;
  for (int i = 0; i < 3000; ++i) {
    auto copy = bytes;
    seed = seed * 1664525u + 1013904223u;
    copy[seed % copy.size()] ^= std::byte(uint8_t(1u << ((seed >> 24) % 8)));
    auto r = parse_npy(copy, "f.npy");
    if (r) {
      EXPECT_EQ(r->data.size(), size_t(r->num_elements()) * dtype_size(r->dtype));
    }
  }
}

}  // namespace
}  // namespace npu::format
