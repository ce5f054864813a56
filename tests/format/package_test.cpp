// Model packages: exact round trips, the binary layout, the version policy and one test per
// class of validation error (container, JSON schema, cross-references, device checks).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "npu/format/crc32.h"
#include "npu/format/file.h"
#include "npu/isa/validate.h"
#include "sample_package.h"

namespace npu::format {
namespace {

using json = nlohmann::json;
using testing::sample_package;

// Sections are immutable: a test edits a copy of the bytes and puts it back.
template <typename Edit>
void edit_section(Section& s, Edit edit) {
  std::vector<std::byte> bytes = s.data.to_vector();
  edit(bytes);
  s.data = std::move(bytes);
}

uint64_t get_le(const std::vector<std::byte>& b, size_t off, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t(static_cast<uint8_t>(b[off + i])) << (8 * i);
  return v;
}
void put_le(std::vector<std::byte>& b, size_t off, size_t n, uint64_t v) {
  for (size_t i = 0; i < n; ++i) b[off + i] = std::byte(uint8_t(v >> (8 * i)));
}

std::vector<std::byte> sample_bytes() {
  auto b = serialize_package(sample_package());
  EXPECT_TRUE(b) << b.error().message;
  return b ? *b : std::vector<std::byte>{};
}

std::string error_of(const std::vector<std::byte>& bytes, const isa::DeviceConfig* cfg = nullptr) {
  auto r = parse_package(bytes, "model.npub", cfg);
  EXPECT_FALSE(r.has_value()) << "parsed unexpectedly";
  return r ? std::string() : r.error().message;
}

#define EXPECT_ERROR(msg, substr)                                                     \
  do {                                                                                \
    const std::string m_ = (msg);                                                     \
    EXPECT_NE(m_.find(substr), std::string::npos) << "got \"" << m_ << "\"";          \
    EXPECT_EQ(m_.rfind("model.npub: ", 0), 0u) << "no file name in \"" << m_ << "\""; \
  } while (0)

TEST(Crc32, KnownVector) {
  const char* s = "123456789";
  EXPECT_EQ(crc32(std::as_bytes(std::span(s, 9))), 0xcbf43926u);
}

TEST(Package, RoundTripIsExact) {
  const Package p = sample_package();
  const isa::DeviceConfig cfg;
  auto bytes = serialize_package(p);
  ASSERT_TRUE(bytes) << bytes.error().message;
  auto q = parse_package(*bytes, "model.npub", &cfg);
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(*q, p);
  auto again = serialize_package(*q);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *bytes);
}

TEST(Package, FileRoundTrip) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("npub_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "m.npub").string();
  ASSERT_TRUE(write_package(path, sample_package()));
  auto p = read_package(path);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(*p, sample_package());
  auto missing = read_package((dir / "none.npub").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("none.npub: cannot open"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Package, BinaryLayout) {
  const auto b = sample_bytes();
  ASSERT_GE(b.size(), 64u);
  EXPECT_EQ(std::memcmp(b.data(), "NPUB", 4), 0);
  EXPECT_EQ(get_le(b, header::kVersionMajor, 2), 1u);
  EXPECT_EQ(get_le(b, header::kVersionMinor, 2), 0u);
  EXPECT_EQ(get_le(b, header::kHeaderSize, 4), 64u);
  EXPECT_EQ(get_le(b, header::kFileSize, 8), b.size());
  EXPECT_EQ(get_le(b, header::kSectionTableOffset, 8), 64u);
  EXPECT_EQ(get_le(b, header::kSectionCount, 4), 3u);
  const uint64_t meta = get_le(b, header::kMetadataOffset, 8);
  EXPECT_EQ(meta % 64, 0u);
  EXPECT_EQ(meta + get_le(b, header::kMetadataSize, 8), b.size());
  EXPECT_EQ(static_cast<char>(b[meta]), '{');
  for (size_t i = 0; i < 3; ++i) {
    const size_t e = 64 + i * section_entry::kEntrySize;
    EXPECT_EQ(get_le(b, e + section_entry::kOffset, 8) % kSectionAlign, 0u);
  }
  EXPECT_EQ(get_le(b, 64 + section_entry::kKind, 4), uint64_t(SectionKind::kCommandBuffer));
  // The checksum is the CRC-32 of the file with the checksum field zeroed.
  auto copy = b;
  put_le(copy, header::kChecksum, 4, 0);
  EXPECT_EQ(crc32(copy), get_le(b, header::kChecksum, 4));
}

// Bytes of the sample with the metadata JSON edited.
std::vector<std::byte> with_json(const std::function<void(json&)>& edit, uint16_t minor = 0,
                                 std::vector<Section> sections = sample_package().sections) {
  json j = json::parse(metadata_to_json(sample_package().metadata));
  edit(j);
  return assemble_package(j.dump(), sections, minor);
}

TEST(Package, VersionPolicy) {
  // Same minor: unknown keys and section kinds are errors.
  EXPECT_ERROR(error_of(with_json([](json& j) { j["future"] = 1; })),
               "metadata: unknown key 'future'");
  EXPECT_ERROR(error_of(with_json([](json& j) { j["tensors"][0]["future"] = 1; })),
               "metadata: tensors[0]: unknown key 'future'");
  auto sections = sample_package().sections;
  sections.push_back({SectionKind{99}, "future", {}});
  EXPECT_ERROR(error_of(with_json([](json&) {}, 0, sections)),
               "section 3 (future): unknown kind 99");

  // Newer minor: both are ignored / kept opaque.
  auto newer = with_json(
      [](json& j) {
        j["future"] = {{"x", 1}};
        j["tensors"][0]["future"] = true;
      },
      7, sections);
  auto p = parse_package(newer, "model.npub");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->metadata, sample_package().metadata);
  EXPECT_EQ(p->sections.back().kind, SectionKind::kExtra);  // unknown kinds read as extra

  // Other major: rejected.
  auto b = sample_bytes();
  put_le(b, header::kVersionMajor, 2, 2);
  seal_package(b);
  EXPECT_ERROR(error_of(b), "unsupported package format version 2.0 (this reader supports 1.x)");
}

struct Poke {
  const char* what;
  std::function<void(std::vector<std::byte>&)> edit;
  const char* message;
  bool seal = true;
};

TEST(Package, ContainerErrors) {
  const auto good = sample_bytes();
  const uint64_t meta = get_le(good, header::kMetadataOffset, 8);
  const size_t e1 = 64 + section_entry::kEntrySize;  // section 1 (constants)
  const std::vector<Poke> pokes = {
      {"empty", [](auto& b) { b.clear(); }, "not a model package (bad magic", false},
      {"command buffer", [](auto& b) { std::memcpy(b.data(), "NPUC", 4); }, "raw command buffer",
       false},
      {"npy", [](auto& b) { std::memcpy(b.data(), "\x93NUMPY", 6); }, "this is a .npy file", false},
      {"truncated header", [](auto& b) { b.resize(40); }, "truncated header: 40 bytes, need 64",
       false},
      {"truncated file",
       [](auto& b) { b.erase(b.end() - std::min<ptrdiff_t>(10, ssize(b)), b.end()); },
       "(truncated)", false},
      {"trailing bytes", [](auto& b) { b.push_back(std::byte{0}); }, "(trailing bytes)", false},
      {"bit flip", [](auto& b) { b[100] ^= std::byte{4}; }, "checksum mismatch", false},
      {"checksum field", [](auto& b) { b[header::kChecksum] ^= std::byte{1}; }, "checksum mismatch",
       false},
      {"flags", [](auto& b) { put_le(b, header::kFlags, 4, 2); },
       "header: flags 0x2 has unknown bits"},
      {"reserved", [](auto& b) { put_le(b, header::kReserved, 8, 1); },
       "header: reserved field 0x1 is not 0"},
      {"header size", [](auto& b) { put_le(b, header::kHeaderSize, 4, 128); },
       "header: header size 128"},
      {"section count", [](auto& b) { put_le(b, header::kSectionCount, 4, 1u << 20); },
       "section count 1048576 above 65536"},
      {"table beyond file",
       [](auto& b) { put_le(b, header::kSectionTableOffset, 8, b.size() - 8); },
       "section table: offset"},
      {"table misaligned", [](auto& b) { put_le(b, header::kSectionTableOffset, 8, 68); },
       "is not 8-aligned"},
      {"table overflow", [](auto& b) { put_le(b, header::kSectionTableOffset, 8, ~uint64_t{7}); },
       "beyond file size"},
      {"section kind", [&](auto& b) { put_le(b, e1 + section_entry::kKind, 4, 0); },
       "section 1 (constants): unknown kind 0"},
      {"section flags", [&](auto& b) { put_le(b, e1 + section_entry::kFlags, 4, 1); },
       "section 1 (constants): flags 0x1"},
      {"section misaligned",
       [&](auto& b) {
         put_le(b, e1 + section_entry::kOffset, 8, get_le(b, e1 + section_entry::kOffset, 8) + 8);
       },
       "section 1 (constants): offset"},
      {"section beyond file",
       [&](auto& b) {
         put_le(b, e1 + section_entry::kOffset, 8, 4096);
         put_le(b, e1 + section_entry::kSize, 8, 8192);
       },
       "section 1 (constants): offset 4096 + size 8192 beyond file size"},
      {"section size overflow",
       [&](auto& b) { put_le(b, e1 + section_entry::kSize, 8, ~uint64_t{0}); }, "beyond file size"},
      {"section name padding", [&](auto& b) { b[e1 + section_entry::kName + 20] = std::byte{'x'}; },
       "name is not NUL-padded"},
      {"section overlaps metadata",
       [&](auto& b) { put_le(b, e1 + section_entry::kOffset, 8, meta); }, "overlaps"},
      {"section overlaps table", [&](auto& b) { put_le(b, e1 + section_entry::kOffset, 8, 64); },
       "overlaps"},
      {"metadata beyond file", [](auto& b) { put_le(b, header::kMetadataSize, 8, b.size()); },
       "metadata: offset"},
      {"metadata misaligned", [&](auto& b) { put_le(b, header::kMetadataOffset, 8, meta + 4); },
       "metadata: offset"},
      {"metadata too small", [](auto& b) { put_le(b, header::kMetadataSize, 8, 1); },
       "metadata: size 1 is too small"},
      {"metadata not json", [&](auto& b) { b[meta] = std::byte{'x'}; },
       "metadata: invalid json: parse error"},
      {"metadata truncated json",
       [](auto& b) {
         put_le(b, header::kMetadataSize, 8, get_le(b, header::kMetadataSize, 8) - 3);
       },
       "metadata: invalid json"},
  };
  for (const Poke& p : pokes) {
    auto b = good;
    p.edit(b);
    if (p.seal) seal_package(b);
    const std::string msg = error_of(b);
    EXPECT_NE(msg.find(p.message), std::string::npos) << p.what << ": got \"" << msg << "\"";
    EXPECT_EQ(msg.rfind("model.npub: ", 0), 0u) << p.what << ": " << msg;
  }
}

TEST(Package, JsonDepthIsBounded) {
  std::string deep = R"({"model":)" + std::string(10000, '[') + std::string(10000, ']') + "}";
  EXPECT_ERROR(error_of(assemble_package(deep, {})), "json nested deeper than 64 levels");
}

struct JsonCase {
  const char* what;
  std::function<void(json&)> edit;
  const char* message;
};

TEST(Package, SchemaErrors) {
  const std::vector<JsonCase> cases = {
      {"root array", [](json& j) { j = json::array(); }, "metadata: expected an object, got array"},
      {"missing model", [](json& j) { j.erase("model"); }, "missing required key 'model'"},
      {"missing tensors", [](json& j) { j.erase("tensors"); }, "missing required key 'tensors'"},
      {"model name type", [](json& j) { j["model"]["name"] = 3; },
       "model.name: expected a string, got number 3"},
      {"isa version", [](json& j) { j["target"]["isa_version"] = {1}; },
       "target.isa_version: expected [major, minor]"},
      {"feature", [](json& j) { j["target"]["features"] = {"fp64"}; },
       "target.features[0]: unknown feature 'fp64'"},
      {"sram negative", [](json& j) { j["target"]["sram_size"] = -1; },
       "target.sram_size: expected a non-negative integer"},
      {"dtype", [](json& j) { j["tensors"][0]["dtype"] = "fp32"; },
       "tensors[0].dtype: unknown dtype 'fp32'"},
      {"shape dim", [](json& j) { j["tensors"][0]["shape"][0] = -2; },
       "tensors[0].shape[0]: expected an integer >= 0 or a symbol"},
      {"shape dim float", [](json& j) { j["tensors"][0]["shape"][0] = 1.5; },
       "tensors[0].shape[0]"},
      {"empty symbol", [](json& j) { j["tensors"][0]["shape"][0] = ""; },
       "empty symbolic dimension"},
      {"role", [](json& j) { j["tensors"][0]["role"] = "weight"; },
       "tensors[0].role: unknown value 'weight' (expected one of: input, output, constant, "
       "intermediate)"},
      {"layout", [](json& j) { j["tensors"][0]["location"]["layout"] = "nhwc"; },
       "tensors[0].location.layout: unknown value 'nhwc'"},
      {"location offset", [](json& j) { j["tensors"][0]["location"].erase("offset"); },
       "tensors[0].location: missing required key 'offset'"},
      {"scale type", [](json& j) { j["tensors"][2]["quantization"]["scale"][0] = "x"; },
       "tensors[2].quantization.scale[0]: expected a number"},
      {"buffer kind", [](json& j) { j["buffers"][0]["kind"] = "weights"; },
       "buffers[0].kind: unknown value 'weights'"},
      {"buffer section", [](json& j) { j["buffers"][0]["section"] = 1ull << 40; },
       "buffers[0].section: value"},
      {"segment kind", [](json& j) { j["segments"][0]["kind"] = "dsp"; },
       "segments[0].kind: unknown value 'dsp'"},
      {"device op_type", [](json& j) { j["segments"][0]["op_type"] = "Add"; },
       "segments[0].op_type: not allowed in a device segment"},
      {"host command buffer", [](json& j) { j["segments"][1]["command_buffer"] = 0; },
       "segments[1].command_buffer: not allowed in a host segment"},
      {"access", [](json& j) { j["segments"][0]["buffers"][0]["access"] = "rw"; },
       "segments[0].buffers[0].access: unknown value 'rw'"},
      {"attributes", [](json& j) { j["segments"][1]["attributes"] = json::array(); },
       "segments[1].attributes: expected an object"},
      {"layer op", [](json& j) { j["segments"][0]["layers"][0].erase("op"); },
       "segments[0].layers[0]: missing required key 'op'"},
      {"inputs type", [](json& j) { j["inputs"] = "input"; }, "inputs: expected an array"},
      {"outputs element", [](json& j) { j["outputs"][0] = 1; }, "outputs[0]: expected a string"},
  };
  for (const JsonCase& c : cases) {
    const std::string msg = error_of(with_json(c.edit));
    EXPECT_NE(msg.find(c.message), std::string::npos) << c.what << ": got \"" << msg << "\"";
    EXPECT_EQ(msg.rfind("model.npub: metadata: ", 0), 0u) << c.what << ": " << msg;
  }
}

struct Mutation {
  const char* what;
  std::function<void(Package&)> edit;
  const char* message;
};

TEST(Package, SemanticErrors) {
  const std::vector<Mutation> cases = {
      {"section name", [](Package& p) { p.sections[2].name = "bad name"; },
       "section 2: invalid name 'bad name'"},
      {"section name long", [](Package& p) { p.sections[2].name = std::string(25, 'a'); },
       "section 2: invalid name"},
      {"section dup", [](Package& p) { p.sections[2].name = "constants"; },
       "section 2: duplicate name 'constants'"},
      {"model name", [](Package& p) { p.metadata.model.name.clear(); },
       "metadata: model.name: empty"},
      {"isa newer", [](Package& p) { p.metadata.target.isa_minor = 9; },
       "target.isa_version: compiled for isa 1.9"},
      {"feature bits", [](Package& p) { p.metadata.target.features |= 1u << 10; },
       "target.features: unknown feature bits"},
      {"buffer dup", [](Package& p) { p.metadata.buffers[1].name = "constants"; },
       "buffers[1] 'constants': duplicate buffer name"},
      {"buffer size 0", [](Package& p) { p.metadata.buffers[1].size = 0; },
       "buffers[1] 'activations': size 0"},
      {"buffer address 0", [](Package& p) { p.metadata.buffers[1].address = 0; }, "address 0"},
      {"buffer wrap", [](Package& p) { p.metadata.buffers[1].address = ~uint64_t{0} - 10; },
       "overflows"},
      {"buffer overlap", [](Package& p) { p.metadata.buffers[1].address = testing::kConstVa + 64; },
       "overlaps buffers[0] 'constants'"},
      {"constants no section", [](Package& p) { p.metadata.buffers[0].section.reset(); },
       "a constants buffer needs a section"},
      {"constants section index", [](Package& p) { p.metadata.buffers[0].section = 9; },
       "buffers[0] 'constants'.section: index 9 but the package has 3 sections"},
      {"constants section kind", [](Package& p) { p.metadata.buffers[0].section = 0; },
       "is command_buffer, expected constants"},
      {"constants too big",
       [](Package& p) {
         p.metadata.buffers[0].size = 64;
         p.metadata.tensors[2].location->offset = 0;
       },
       "has 80 bytes, more than the buffer size 64"},
      {"section on arena", [](Package& p) { p.metadata.buffers[1].section = 1; },
       "only constants buffers have a section"},
      {"tensor dup", [](Package& p) { p.metadata.tensors[1].name = "input"; },
       "tensors[1] 'input': duplicate tensor name"},
      {"tensor empty name", [](Package& p) { p.metadata.tensors[1].name.clear(); },
       "tensors[1]: empty name"},
      {"negative dim", [](Package& p) { p.metadata.tensors[1].shape[0] = Dim::fixed(-3); },
       "tensors[1] 'bias'.shape[0]: invalid size -3"},
      {"unknown buffer", [](Package& p) { p.metadata.tensors[3].location->buffer = "nope"; },
       "tensors[3] 'x'.location.buffer: unknown buffer 'nope'"},
      {"beyond buffer", [](Package& p) { p.metadata.tensors[3].location->offset = 4090; },
       "tensors[3] 'x'.location: offset 4090 + size 64 beyond buffer 'activations' size 4096"},
      {"too small", [](Package& p) { p.metadata.tensors[3].location->size = 32; },
       "tensors[3] 'x'.location.size: 32 bytes, the tensor needs 64"},
      {"strides count", [](Package& p) { p.metadata.tensors[2].location->strides = {1}; },
       "1 strides for a 4-d shape"},
      {"strides extent",
       [](Package& p) {
         p.metadata.tensors[2].location->strides = {8, 2, 1, 1};
       },
       "16 bytes, the tensor needs 28"},
      {"layout rank", [](Package& p) { p.metadata.tensors[3].location->layout = Layout::kNCHW; },
       "NCHW needs a 4-d shape, got 2-d"},
      {"constant placement",
       [](Package& p) { p.metadata.tensors[1].location->buffer = "activations"; },
       "constant in buffer 'activations' of kind activations"},
      {"constant without location", [](Package& p) { p.metadata.tensors[1].location.reset(); },
       "a constant needs a location"},
      {"quant empty", [](Package& p) { p.metadata.tensors[3].quantization->scale.clear(); },
       "quantization.scale: empty"},
      {"quant zp count",
       [](Package& p) {
         p.metadata.tensors[3].quantization->zero_point = {0, 1};
       },
       "quantization.zero_point: 2 values for 1 scales"},
      {"quant scale", [](Package& p) { p.metadata.tensors[3].quantization->scale = {0.0}; },
       "quantization.scale[0]: must be finite and > 0"},
      {"quant zp range",
       [](Package& p) { p.metadata.tensors[2].quantization->zero_point[1] = 200; },
       "quantization.zero_point[1]: 200 outside [-128, 127] of int8"},
      {"quant axis", [](Package& p) { p.metadata.tensors[2].quantization->axis = 4; },
       "quantization.axis: 4 outside a 4-d shape"},
      {"quant axis size", [](Package& p) { p.metadata.tensors[2].quantization->axis = 2; },
       "4 scales for axis 2 of size 2"},
      {"quant no axis", [](Package& p) { p.metadata.tensors[2].quantization->axis.reset(); },
       "4 scales without an axis"},
      {"input unknown", [](Package& p) { p.metadata.inputs = {"nope"}; },
       "inputs[0]: unknown tensor 'nope'"},
      {"input twice",
       [](Package& p) {
         p.metadata.inputs = {"input", "input"};
       },
       "inputs[1]: 'input' listed twice"},
      {"input role",
       [](Package& p) {
         p.metadata.inputs = {"input", "x"};
       },
       "inputs[1]: tensor 'x' has role intermediate, expected input"},
      {"input unlisted", [](Package& p) { p.metadata.inputs.clear(); },
       "tensors[0] 'input': role input but not listed in inputs"},
      {"no outputs",
       [](Package& p) {
         p.metadata.outputs.clear();
         p.metadata.tensors[4].role = TensorRole::kIntermediate;
       },
       "outputs: the model has no outputs"},
      {"segment unknown input", [](Package& p) { p.metadata.segments[1].inputs = {"nope"}; },
       "segments[1] 'softmax0'.inputs[0]: unknown tensor 'nope'"},
      {"dataflow order",
       [](Package& p) { std::swap(p.metadata.segments[0], p.metadata.segments[1]); },
       "segments[0] 'softmax0'.inputs[0]: tensor 'x' is not a graph input, a constant or an output "
       "of an earlier segment"},
      {"double producer", [](Package& p) { p.metadata.segments[1].outputs = {"x"}; },
       "tensor 'x' is already produced by an earlier segment"},
      {"writes input", [](Package& p) { p.metadata.segments[1].outputs = {"input"}; },
       "writes input tensor 'input'"},
      {"output not produced",
       [](Package& p) {
         p.metadata.segments[1].outputs = {"x2"};
         p.metadata.tensors.push_back({.name = "x2"});
       },
       "outputs[0]: tensor 'probs' is not produced by any segment"},
      {"host op type", [](Package& p) { p.metadata.segments[1].op_type.clear(); },
       "segments[1] 'softmax0'.op_type: empty"},
      {"host attributes", [](Package& p) { p.metadata.segments[1].attributes = "[1]"; },
       "attributes: not a json object"},
      {"cb index", [](Package& p) { p.metadata.segments[0].command_buffer = 5; },
       "segments[0] 'npu0'.command_buffer: section 5 but the package has 3 sections"},
      {"cb kind", [](Package& p) { p.metadata.segments[0].command_buffer = 1; },
       "section 1 'constants' is constants, expected command_buffer"},
      {"segment buffer unknown",
       [](Package& p) { p.metadata.segments[0].buffers[0].buffer = "nope"; },
       "segments[0] 'npu0'.buffers[0]: unknown buffer 'nope'"},
      {"segment buffer twice",
       [](Package& p) { p.metadata.segments[0].buffers[1].buffer = "constants"; },
       "buffer 'constants' listed twice"},
      {"writes constants",
       [](Package& p) { p.metadata.segments[0].buffers[0].access = Access::kReadWrite; },
       "writes constants buffer 'constants'"},
      {"input not readable", [](Package& p) { p.metadata.segments[0].buffers.pop_back(); },
       "inputs[0]: tensor 'input' lives in buffer 'io-input' which the segment does not read"},
      {"output not writable",
       [](Package& p) { p.metadata.segments[0].buffers[1].access = Access::kRead; },
       "outputs[0]: tensor 'x' lives in buffer 'activations' which the segment does not write"},
      {"cb too short",
       [](Package& p) { edit_section(p.sections[0], [](auto& b) { b.resize(16); }); },
       "command buffer (section 0 'seg0.cmd'): 16 bytes, shorter than its header"},
      {"cb magic",
       [](Package& p) { edit_section(p.sections[0], [](auto& b) { b[0] = std::byte{0}; }); },
       "command buffer (section 0 'seg0.cmd'): bad magic"},
      {"cb size",
       [](Package& p) { edit_section(p.sections[0], [](auto& b) { b.resize(b.size() + 128); }); },
       "header size"},
      {"cb features", [](Package& p) { p.metadata.target.features = NPU_FEATURE_INT8; },
       "not declared in target.features"},
  };
  for (const Mutation& c : cases) {
    Package p = sample_package();
    c.edit(p);
    auto v = validate_package(p, "model.npub");
    ASSERT_FALSE(v) << c.what;
    EXPECT_NE(v.error().message.find(c.message), std::string::npos)
        << c.what << ": got \"" << v.error().message << "\"";
    EXPECT_EQ(v.error().message.rfind("model.npub: ", 0), 0u) << c.what;
    // The writer refuses it too, and a file carrying it fails to parse with the same message.
    EXPECT_FALSE(serialize_package(p)) << c.what;
    auto parsed =
        parse_package(assemble_package(metadata_to_json(p.metadata), p.sections), "model.npub");
    if (!parsed) {
      EXPECT_NE(parsed.error().message.find(c.message), std::string::npos)
          << c.what << ": got \"" << parsed.error().message << "\"";
    }
  }
}

TEST(Package, DeviceChecks) {
  isa::DeviceConfig cfg;
  const Package good = sample_package();
  ASSERT_TRUE(validate_package(good, "model.npub", &cfg));

  {  // The target needs more SRAM than the device has.
    isa::DeviceConfig small = cfg;
    small.sram_size = 4096;
    auto v = validate_package(good, "model.npub", &small);
    ASSERT_FALSE(v);
    EXPECT_ERROR(v.error().message,
                 "target.sram_size: compiled for 1048576 bytes of sram, the device has 4096");
  }
  {  // A feature the device lacks.
    isa::DeviceConfig no_fp = cfg;
    no_fp.features = NPU_FEATURE_INT8;
    auto v = validate_package(good, "model.npub", &no_fp);
    ASSERT_FALSE(v);
    EXPECT_ERROR(v.error().message, "target.features: needs features 0x2 the device lacks");
  }
  {  // A command buffer the ISA validator rejects: SRAM beyond the device.
    Package p = good;
    p.metadata.target.sram_size = 1024;
    isa::DeviceConfig tiny = cfg;
    tiny.sram_size = 2048;
    auto v = validate_package(p, "model.npub", &tiny);
    ASSERT_FALSE(v);
    EXPECT_ERROR(v.error().message,
                 "segments[0] 'npu0': command buffer (section 0 'seg0.cmd'): command");
  }
  {  // A DMA outside every buffer the segment declares.
    Package p = good;
    p.metadata.buffers[2].size = 32;
    p.metadata.tensors[0].shape = {Dim::fixed(1), Dim::fixed(8)};
    p.metadata.tensors[0].location->size = 32;
    auto v = validate_package(p, "model.npub", &cfg);
    ASSERT_FALSE(v);
    EXPECT_ERROR(v.error().message,
                 "command 0 field dram_addr: reads [0x100020000, 0x100020040) outside the "
                 "segment's buffers");
  }
  {  // A DMA store into a buffer declared read-only.
    Package p = good;
    p.metadata.segments[0].buffers[1].access = Access::kRead;
    p.metadata.segments[0].outputs.clear();
    p.metadata.segments[1].inputs.clear();
    auto v = validate_package(p, "model.npub", &cfg);
    ASSERT_FALSE(v);
    EXPECT_ERROR(v.error().message, "writes buffer 'activations' which the segment declares read");
  }
  {  // The same checks through parse_package.
    auto bytes = serialize_package(good);
    ASSERT_TRUE(bytes);
    isa::DeviceConfig small = cfg;
    small.sram_size = 4096;
    EXPECT_ERROR(error_of(*bytes, &small), "the device has 4096");
  }
}

TEST(Package, SymbolicDimsAndHostOnlyTensors) {
  Package p = sample_package();
  p.metadata.tensors[0].shape = {Dim::named("batch"), Dim::fixed(16)};
  auto bytes = serialize_package(p);
  ASSERT_TRUE(bytes) << bytes.error().message;
  auto q = parse_package(*bytes, "m.npub");
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(q->metadata.tensors[0].shape[0], Dim::named("batch"));
  EXPECT_EQ(q->metadata.segments[1].attributes, R"({"axis":-1})");
}

}  // namespace
}  // namespace npu::format
