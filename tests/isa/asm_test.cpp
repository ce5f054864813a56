// The assembler and disassembler: exact round trips (examples, builder buffers, .raw, random
// commands), the text syntax, error messages with file:line, and garbage handling.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "asm_table.h"  // white-box: the random-command test fills every field the table lists
#include "npu/isa/asm.h"
#include "npu/isa/builder.h"
#include "npu/isa/opcodes.h"
#include "npu/isa/validate.h"

namespace npu::isa {
namespace {

using Bytes = std::vector<std::byte>;

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> example_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(NPU_SOURCE_DIR "/examples")) {
    if (e.path().extension() == ".npuasm") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

npu_cmd command_at(const Bytes& b, size_t i) {
  npu_cmd c;
  std::memcpy(&c, b.data() + sizeof(npu_cmdbuf_header) + i * NPU_CMD_SIZE, sizeof c);
  return c;
}

npu_cmdbuf_header header_of(const Bytes& b) {
  npu_cmdbuf_header h;
  std::memcpy(&h, b.data(), sizeof h);
  return h;
}

/// disassemble -> assemble gives the same bytes, and the text is a fixed point.
void expect_round_trip(const Bytes& bin) {
  auto text = disassemble(bin);
  ASSERT_TRUE(text) << text.error().message;
  auto again = assemble(*text, "roundtrip.npuasm");
  ASSERT_TRUE(again) << again.error().message << "\n" << *text;
  EXPECT_TRUE(*again == bin) << *text;
  auto text2 = disassemble(*again);
  ASSERT_TRUE(text2);
  EXPECT_EQ(*text2, *text);
}

std::string asm_error(std::string_view text) {
  auto r = assemble(text, "prog.npuasm");
  return r ? std::string("(no error)") : r.error().message;
}

// ---------------------------------------------------------------------------------------------
// Examples

TEST(AsmExamples, EveryExampleValidatesAndRoundTrips) {
  const auto files = example_files();
  ASSERT_GE(files.size(), 13u);
  std::set<uint8_t> opcodes;
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    const std::string text = read_text(f);
    auto a = assemble_listing(text, f.filename().string());
    ASSERT_TRUE(a) << a.error().message;
    auto v = validate_assembly(*a, DeviceConfig{}, f.filename().string());
    EXPECT_TRUE(v) << v.error().message;
    expect_round_trip(a->bytes);
    for (uint32_t i = 0; i < header_of(a->bytes).num_cmds; ++i) {
      opcodes.insert(command_at(a->bytes, i).hdr.opcode);
    }
    // A runner needs to know where the DRAM buffers go: symbols at the top.
    EXPECT_NE(text.find(".equ"), std::string::npos);
    EXPECT_NE(text.find("0x100100000"), std::string::npos);
  }
  for (const OpcodeInfo& op : isa::opcodes()) {
    EXPECT_TRUE(opcodes.count(op.opcode)) << "no example uses " << op.mnemonic;
  }
}

TEST(AsmExamples, ListingMapsCommandsToLinesAndValidationErrorsToo) {
  const std::string text =
      "# comment\n"
      "\n"
      "nop cp\n"
      "pool kind=max dtype=fp32 in_h=4 in_w=4 channels=1 out_h=3 out_w=3 k_h=2 k_w=2 "
      "stride_h=2 stride_w=2\n"
      "end\n";
  auto a = assemble_listing(text, "p.npuasm");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->lines, (std::vector<uint32_t>{3, 4, 5}));
  auto v = validate_assembly(*a, DeviceConfig{}, "p.npuasm");
  ASSERT_FALSE(v);
  EXPECT_TRUE(v.error().message.starts_with("p.npuasm:4: command 1 (pool): ")) << v.error().message;
}

// ---------------------------------------------------------------------------------------------
// Builder buffers with every command kind

Bytes every_kind_buffer() {
  const float inf = std::numeric_limits<float>::infinity();
  CommandBufferBuilder b;
  b.marker(NPU_ENGINE_CP, 7);
  b.dma_load({.dram = 0x1'0000'0040,
              .sram = 0x200,
              .elem_size = 2,
              .size = {5, 3, 2},
              .dram_stride = std::array<uint32_t, 3>{2, 0, 40},
              .pad_before = {1, 0, 2},
              .pad_after = {0, 3, 1},
              .pad_value = 0xbeef});
  b.sem_signal(NPU_ENGINE_DMA_IN, 3, 2);
  b.sem_wait(NPU_ENGINE_MATRIX, 3, 2);
  b.conv2d({.in_addr = 0x100,
            .w_addr = 0x2000,
            .out_addr = 0x3000,
            .chan_addr = 0x4000,
            .in_h = 9,
            .in_w = 7,
            .in_c = 6,
            .out_c = 6,
            .k_h = 3,
            .k_w = 2,
            .groups = 3,
            .stride_h = 2,
            .dil_w = 2,
            .pad_top = 1,
            .pad_right = 2,
            .in_dtype = NPU_DTYPE_UINT8,
            .out_dtype = NPU_DTYPE_INT32,
            .in_zp = -7,
            .out_zp = -128,
            .clamp_min = -100});
  b.conv2d({.in_dtype = NPU_DTYPE_FP32,
            .w_dtype = NPU_DTYPE_FP32,
            .out_dtype = NPU_DTYPE_FP32,
            .fclamp_min = -inf,
            .fclamp_max = 6.0f,
            .bias = true});
  b.matmul({.a_addr = 1,
            .b_addr = 2,
            .out_addr = 3,
            .m = 3,
            .k = 5,
            .n = 7,
            .batch = 4,
            .b_batch_stride = 0u,
            .a_dtype = NPU_DTYPE_FP32,
            .b_dtype = NPU_DTYPE_FP32,
            .out_dtype = NPU_DTYPE_FP32,
            .fclamp_min = -0.0f,
            .fclamp_max = 0x1.fffffep+127f,
            .bias = true,
            .transpose_b = true});
  b.matmul({.m = 2, .a_zp = -128, .out_zp = 127, .clamp_min = -5, .clamp_max = 5});
  b.eltwise({.op = NPU_ELTWISE_PRELU,
             .shape = {2, 3, 4, 5},
             .a_addr = 0x10,
             .b_addr = 0x20,
             .b_stride = std::array<uint32_t, 4>{0, 0, 0, 1},
             .out_addr = 0x30});
  b.activation({.func = NPU_ACT_HARDSIGMOID,
                .shape = {1, 2, 3, 4},
                .in_addr = 4,
                .out_addr = 8,
                .alpha = 0x1.555556p-3f,
                .beta = 1e-45f});  // denormal
  b.activation({.func = NPU_ACT_LEAKY_RELU, .alpha = -0.01f, .beta = 3.4028235e38f});
  b.pool({.kind = NPU_POOL_AVG,
          .dtype = NPU_DTYPE_UINT8,
          .in_h = 5,
          .in_w = 5,
          .channels = 3,
          .k_h = 3,
          .k_w = 3,
          .pad_top = 1,
          .pad_left = 1,
          .count_pad = true});
  b.softmax({.in_addr = 0x40, .out_addr = 0x80, .rows = 3, .len = 11, .log = true});
  b.scale_shift({.in_addr = 1, .out_addr = 2, .scale_addr = 3, .shift_addr = 4, .outer = 5});
  b.quantize({.count = 10,
              .channels = 2,
              .inner = 5,
              .params_addr = 0x99,
              .scale = 0.1f,
              .zp = -3,
              .dtype = NPU_DTYPE_UINT8});
  b.dequantize({.count = 10, .scale = 3.0e-9f, .zp = 100, .dtype = NPU_DTYPE_INT32});
  b.requantize({.multiplier = 0x7fffffff, .shift = 62, .in_zp = -2147483647 - 1, .out_zp = -1});
  b.transpose({.in_shape = {2, 3, 4, 5}, .perm = {3, 1, 0, 2}, .elem_size = 2});
  b.reduce({.kind = NPU_REDUCE_MIN, .outer = 2, .len = 3, .inner = 4});
  b.moments(
      {.in_addr = 0x10, .mean_addr = 0x20, .sq_addr = 0x40, .outer = 2, .len = 3, .inner = 4});
  b.nop(NPU_ENGINE_VECTOR);
  b.sem_signal(NPU_ENGINE_VECTOR, 31, 65535);
  b.fence(true, 0xffffffffu);
  return b.finish(NPU_FEATURE_TRANSCENDENTAL);
}

TEST(AsmRoundTrip, BuilderBufferWithEveryCommandKind) {
  const Bytes bin = every_kind_buffer();
  expect_round_trip(bin);
  auto text = disassemble(bin);
  ASSERT_TRUE(text);
  for (const char* want : {".version 1.2",
                           ".features int8 fp32 transcendental",
                           "in_zp=-7",
                           "out_zp=-128",
                           "fclamp_min=-inf",
                           "fclamp_max=6",
                           "fclamp_min=-0 ",
                           "fclamp_max=3.4028235e+38",
                           "in_dtype=uint8",
                           "out_dtype=int32",
                           " bias  #",
                           " bias transpose_b",
                           "op=prelu",
                           "func=hardsigmoid",
                           "beta=1e-45",
                           "kind=avg",
                           "count_pad",
                           " log",
                           "kind=min",
                           "pad_value=0xbeef",
                           "dram_addr=0x100000040",
                           "dram_stride=2,0,40",
                           "perm=3,1,0,2",
                           "b.stride=0,0,0,1",
                           "in_zp=-2147483648",
                           "fence value=4294967295 irq",
                           "sem_signal vector sem=31 count=65535",
                           "nop vector",
                           "marker cp id=7",
                           "end  # ["}) {
    EXPECT_NE(text->find(want), std::string::npos) << want << "\n" << *text;
  }
  EXPECT_EQ(text->find(".raw"), std::string::npos) << *text;
}

TEST(AsmRoundTrip, IndexCommentsAreOptional) {
  auto text = disassemble(every_kind_buffer(), {.index_comments = false});
  ASSERT_TRUE(text);
  EXPECT_EQ(text->find("# ["), std::string::npos);
  auto again = assemble(*text);
  ASSERT_TRUE(again);
  EXPECT_TRUE(*again == every_kind_buffer());
}

TEST(AsmRoundTrip, FloatSpellings) {
  auto r = assemble(
      "activation func=copy alpha=0x1.8p1 beta=-inf\n"
      "activation func=copy alpha=+1.5e-3 beta=bits(0x7f800001)\n"
      "activation func=copy alpha=nan beta=-nan\n"
      "activation func=copy alpha=-0 beta=.25\n"
      "end\n");
  ASSERT_TRUE(r) << r.error().message;
  auto f = [&](size_t i, bool beta) {
    const auto& a = command_at(*r, i).activation;
    return std::bit_cast<uint32_t>(beta ? a.beta : a.alpha);
  };
  EXPECT_EQ(f(0, false), std::bit_cast<uint32_t>(3.0f));
  EXPECT_EQ(f(0, true), 0xff800000u);
  EXPECT_EQ(f(1, false), std::bit_cast<uint32_t>(1.5e-3f));
  EXPECT_EQ(f(1, true), 0x7f800001u);
  EXPECT_EQ(f(2, false), 0x7fc00000u);
  EXPECT_EQ(f(2, true), 0xffc00000u);
  EXPECT_EQ(f(3, false), 0x80000000u);
  EXPECT_EQ(f(3, true), std::bit_cast<uint32_t>(0.25f));
  auto text = disassemble(*r);
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("beta=bits(0x7f800001)"), std::string::npos) << *text;
  EXPECT_NE(text->find("alpha=nan beta=-nan"), std::string::npos) << *text;
  expect_round_trip(*r);
}

// ---------------------------------------------------------------------------------------------
// Syntax

TEST(AsmSyntax, DirectivesSymbolsAndDefaults) {
  auto r = assemble(
      "; semicolon comment\n"
      "  .equ BASE 0x100000000   # a DRAM address\n"
      ".equ OFF 0b100\n"
      ".equ NEG -5\n"
      "\tdma_load dram_addr=BASE+0x40-OFF sram_addr=OFF+OFF size=3,NEG+6,1 elem_size=4 ; c\n"
      "conv2d in_zp=NEG out_zp=-0x10 in_dtype=int8 w_dtype=1 out_dtype=int32\n"
      "sem_wait matrix sem=2 count=1\n"
      "matmul transpose_b a_dtype=fp32 bias\n"
      "end\n");
  ASSERT_TRUE(r) << r.error().message;
  const auto h = header_of(*r);
  EXPECT_EQ(h.magic, NPU_ISA_MAGIC);
  EXPECT_EQ(h.version_major, 1);
  EXPECT_EQ(h.version_minor, NPU_ISA_VERSION_MINOR);
  EXPECT_EQ(h.num_cmds, 5u);
  EXPECT_EQ(h.size, 32u + 5 * 128);
  // Default features: what the commands need (int8 conv, fp32 matmul), as finish() computes.
  EXPECT_EQ(h.required_features, uint64_t{NPU_FEATURE_INT8 | NPU_FEATURE_FP32});

  const auto d = command_at(*r, 0);
  EXPECT_EQ(d.hdr.engine, NPU_ENGINE_DMA_IN);
  EXPECT_EQ(d.dma.dram_addr, 0x100000000ull + 0x40 - 4);
  EXPECT_EQ(d.dma.sram_addr, 8u);
  EXPECT_EQ(d.dma.size[1], 1u);
  EXPECT_EQ(d.dma.dram_stride[0], 0u);  // left out = zero
  const auto c = command_at(*r, 1).conv2d;
  EXPECT_EQ(c.in_zp, -5);
  EXPECT_EQ(c.out_zp, -16);
  EXPECT_EQ(c.w_dtype, NPU_DTYPE_INT8);
  EXPECT_EQ(c.out_dtype, NPU_DTYPE_INT32);
  EXPECT_EQ(command_at(*r, 2).hdr.engine, NPU_ENGINE_MATRIX);
  EXPECT_EQ(command_at(*r, 3).hdr.flags, NPU_MM_FLAG_BIAS | NPU_MM_FLAG_TRANSPOSE_B);
}

TEST(AsmSyntax, ExplicitHeader) {
  auto r = assemble(".version 1.3\n.features none\nconv2d in_dtype=fp32\nend\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(header_of(*r).version_minor, 3);
  EXPECT_EQ(header_of(*r).required_features, 0u);
  r = assemble(".features transcendental 0x100\nend\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(header_of(*r).required_features, NPU_FEATURE_TRANSCENDENTAL | 0x100);
  auto text = disassemble(*r);
  ASSERT_TRUE(text);
  EXPECT_NE(text->find(".features transcendental 0x100\n"), std::string::npos);
  expect_round_trip(*r);
}

TEST(AsmSyntax, RawDirective) {
  std::string raw = ".raw 7f";
  for (int i = 1; i < 128; ++i) raw += (i % 8 == 0 ? " " : "") + std::string(i == 64 ? "ab" : "00");
  auto r = assemble(raw + "\nend\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(command_at(*r, 0).hdr.opcode, 0x7f);
  EXPECT_EQ(command_at(*r, 0).bytes[64], 0xab);
  auto text = disassemble(*r);
  ASSERT_TRUE(text);
  EXPECT_NE(text->find(".raw 7f00000000000000 "), std::string::npos) << *text;
  EXPECT_NE(text->find("# [0] unknown opcode 0x7f"), std::string::npos) << *text;
  expect_round_trip(*r);
}

// ---------------------------------------------------------------------------------------------
// Commands the text cannot express go through .raw

TEST(AsmRoundTrip, InvalidCommandsUseRaw) {
  CommandBufferBuilder b;
  b.conv2d({});
  b.cmd(0).conv2d.reserved[5] = 1;  // non-zero reserved byte
  b.pool({});
  b.cmd(1).hdr.engine = NPU_ENGINE_MATRIX;  // engine not allowed
  b.softmax({});
  b.cmd(2).hdr.flags = 0x8;  // undefined flag
  b.nop();
  b.cmd(3).hdr.engine = 9;  // unknown engine
  b.nop();
  b.cmd(4).hdr.reserved = 1;
  npu_cmd junk;
  std::memset(&junk, 0xa5, sizeof junk);
  b.add(junk);
  const Bytes bin = b.finish();
  auto text = disassemble(bin);
  ASSERT_TRUE(text);
  for (const char* want :
       {"# [0] non-zero reserved bytes", "# [1] engine matrix not allowed for pool",
        "# [2] undefined flag bits 0x8", "# [3] unknown engine 9", "# [4] non-zero reserved bytes",
        "# [5] unknown opcode 0xa5", "end  # [6]"}) {
    EXPECT_NE(text->find(want), std::string::npos) << want << "\n" << *text;
  }
  expect_round_trip(bin);
}

/// A random buffer: `n` commands, each either random bytes or a well-formed random command
/// built from the table (random field values, allowed engine, defined flags).
Bytes random_buffer(std::mt19937_64& rng, uint32_t n) {
  std::vector<npu_cmd> cmds(n);
  const auto ops = isa::opcodes();
  for (auto& c : cmds) {
    for (auto& byte : c.bytes) byte = static_cast<uint8_t>(rng());
    if (rng() % 4 == 0) continue;  // pure garbage
    npu_cmd clean;
    std::memset(&clean, 0, sizeof clean);
    const OpcodeInfo& op = ops[rng() % ops.size()];
    clean.hdr.opcode = op.opcode;
    do {
      clean.hdr.engine = static_cast<uint8_t>(rng() % NPU_NUM_ENGINES);
    } while (!op.allows(clean.hdr.engine));
    for (const auto& f : op.flag_names) {
      if (rng() & 1) clean.hdr.flags |= f.bit;
    }
    for (const auto& f : asmtab::fields_of(op.opcode)) {
      const size_t len = size_t{asmtab::type_size(f.type)} * f.count;
      std::memcpy(clean.bytes + f.offset, c.bytes + f.offset, len);
      if (rng() % 3 == 0) std::memset(clean.bytes + f.offset, 0, len);  // some zero fields
    }
    c = clean;
  }
  Bytes bin = CommandBufferBuilder::serialize(cmds, rng());
  npu_cmdbuf_header h = header_of(bin);
  h.version_major = static_cast<uint16_t>(rng());
  h.version_minor = static_cast<uint16_t>(rng());
  std::memcpy(bin.data(), &h, sizeof h);
  return bin;
}

TEST(AsmRoundTrip, RandomCommandsBehindAValidHeader) {
  std::mt19937_64 rng(12345);
  size_t raw_lines = 0, text_lines = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const Bytes bin = random_buffer(rng, 1 + static_cast<uint32_t>(rng() % 12));
    auto text = disassemble(bin);
    ASSERT_TRUE(text) << text.error().message;
    auto again = assemble(*text);
    ASSERT_TRUE(again) << again.error().message << "\n" << *text;
    ASSERT_TRUE(*again == bin) << *text;
    for (size_t p = 0; (p = text->find('\n', p)) != std::string::npos; ++p) {
      if (text->compare(p + 1, 4, ".raw") == 0) {
        ++raw_lines;
      } else if (p + 1 < text->size() && text->compare(p + 1, 1, ".") != 0) {
        ++text_lines;
      }
    }
  }
  // Both paths were exercised: well-formed random commands print as text.
  EXPECT_GT(raw_lines, 100u);
  EXPECT_GT(text_lines, 500u);
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(AsmErrors, MessagesNameFileLineOpcodeAndField) {
  EXPECT_EQ(asm_error("nop cp\n\nconv3d in_h=1\n"), "prog.npuasm:3: unknown opcode 'conv3d'");
  EXPECT_EQ(asm_error("conv2d strid_h=1\n"), "prog.npuasm:1: conv2d: unknown field 'strid_h'");
  EXPECT_EQ(asm_error("conv2d in_h=12x\n"), "prog.npuasm:1: conv2d: field in_h: bad value '12x'");
  EXPECT_EQ(asm_error("conv2d in_h=\n"), "prog.npuasm:1: conv2d: field in_h: missing value");
  EXPECT_EQ(asm_error("conv2d stride_h=300\n"),
            "prog.npuasm:1: conv2d: field stride_h: value 300 out of range 0..255");
  EXPECT_EQ(asm_error("conv2d in_h=-1\n"),
            "prog.npuasm:1: conv2d: field in_h: value -1 out of range 0..65535");
  EXPECT_EQ(asm_error("conv2d in_zp=0x80000000\n"),
            "prog.npuasm:1: conv2d: field in_zp: value 2147483648 out of range "
            "-2147483648..2147483647");
  EXPECT_EQ(asm_error("dma_load dram_addr=0x10000000000000000\n"),
            "prog.npuasm:1: dma_load: field dram_addr: value '0x10000000000000000' out of range");
  EXPECT_EQ(asm_error("nop\n"),
            "prog.npuasm:1: nop: missing engine (one of cp, dma_in, dma_out, matrix, vector)");
  EXPECT_EQ(asm_error("sem_signal sem=1 count=1\n"),
            "prog.npuasm:1: sem_signal: missing engine (one of dma_in, dma_out, matrix, vector)");
  EXPECT_EQ(asm_error("conv2d vector\n"),
            "prog.npuasm:1: conv2d: engine vector not allowed (expected matrix)");
  EXPECT_EQ(asm_error("marker cp vector\n"), "prog.npuasm:1: marker: engine given twice");
  EXPECT_EQ(asm_error("matmul bias bias\n"), "prog.npuasm:1: matmul: flag 'bias' given twice");
  EXPECT_EQ(asm_error("matmul irq\n"), "prog.npuasm:1: matmul: unknown flag or engine 'irq'");
  EXPECT_EQ(asm_error("matmul m=1 m=2\n"), "prog.npuasm:1: matmul: field 'm' given twice");
  EXPECT_EQ(asm_error("pool dtype=fp64\n"),
            "prog.npuasm:1: pool: field dtype: unknown value 'fp64' (expected "
            "int8|uint8|int32|fp32|fp16|bf16)");
  EXPECT_EQ(asm_error("pool dtype=300\n"),
            "prog.npuasm:1: pool: field dtype: value 300 out of range 0..255");
  EXPECT_EQ(asm_error("dma_load size=1,2\n"),
            "prog.npuasm:1: dma_load: field size: expected 3 values, got 2");
  EXPECT_EQ(asm_error("dma_load size=1,,2\n"),
            "prog.npuasm:1: dma_load: field size: missing value");
  EXPECT_EQ(asm_error("dma_load sram_addr=FOO\n"),
            "prog.npuasm:1: dma_load: field sram_addr: unknown symbol 'FOO'");
  EXPECT_EQ(asm_error("activation alpha=1.5.2\n"),
            "prog.npuasm:1: activation: field alpha: bad float '1.5.2'");
  EXPECT_EQ(asm_error("activation alpha=1e99\n"),
            "prog.npuasm:1: activation: field alpha: bad float '1e99'");
  EXPECT_EQ(asm_error(".raw 0102\n"), "prog.npuasm:1: .raw: expected 128 bytes, got 2");
  EXPECT_EQ(asm_error(".raw 010\n"), "prog.npuasm:1: .raw: odd number of hex digits in '010'");
  EXPECT_EQ(asm_error(".raw zz\n"), "prog.npuasm:1: .raw: bad hex byte 'zz'");
  EXPECT_EQ(asm_error(".equ A 1\n.equ A 2\n"), "prog.npuasm:2: .equ: symbol 'A' already defined");
  EXPECT_EQ(asm_error(".equ 9A 1\n"), "prog.npuasm:1: .equ: bad symbol name '9A'");
  EXPECT_EQ(asm_error(".equ A\n"), "prog.npuasm:1: .equ: expected '.equ NAME VALUE'");
  EXPECT_EQ(asm_error(".version 1\n"), "prog.npuasm:1: .version: expected MAJOR.MINOR");
  EXPECT_EQ(asm_error(".version 1.0\n.version 1.0\n"), "prog.npuasm:2: .version: given twice");
  EXPECT_EQ(asm_error(".features fp64\n"), "prog.npuasm:1: .features: unknown feature 'fp64'");
  EXPECT_EQ(asm_error(".align 4\n"), "prog.npuasm:1: unknown directive '.align'");
  EXPECT_EQ(asm_error("# nothing\n"), "prog.npuasm: no commands");
  EXPECT_EQ(asm_error(""), "prog.npuasm: no commands");
}

TEST(AsmErrors, ErrorCodeIsEinval) {
  auto r = assemble("bogus\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
}

TEST(DisasmErrors, GarbageHeadersAreErrorsNotCrashes) {
  auto err = [](const Bytes& b) {
    auto r = disassemble(b);
    return r ? std::string("(no error)") : r.error().message;
  };
  EXPECT_EQ(err({}), "buffer too short: 0 bytes, the header alone is 32");
  EXPECT_EQ(err(Bytes(31)), "buffer too short: 31 bytes, the header alone is 32");
  Bytes good = every_kind_buffer();
  Bytes bad = good;
  bad[0] = std::byte{0x12};
  EXPECT_EQ(err(bad), "header: bad magic 0x43555012, expected 0x4355504e");
  bad = good;
  bad.pop_back();
  EXPECT_EQ(err(bad), "header: size " + std::to_string(good.size()) +
                          " does not match the buffer's " + std::to_string(good.size() - 1) +
                          " bytes");
  auto with_header = [&](auto mutate) {
    Bytes b = good;
    npu_cmdbuf_header h = header_of(b);
    mutate(h);
    std::memcpy(b.data(), &h, sizeof h);
    return b;
  };
  const uint32_t n = header_of(good).num_cmds;
  EXPECT_EQ(err(with_header([](npu_cmdbuf_header& h) { h.num_cmds += 1; })),
            "header: num_cmds " + std::to_string(n + 1) + " does not match size " +
                std::to_string(good.size()) + " (32 + num_cmds * 128)");
  EXPECT_EQ(err(with_header([](npu_cmdbuf_header& h) { h.reserved = 5; })),
            "header: reserved must be zero, got 0x5");
  Bytes empty(32);
  npu_cmdbuf_header h{};
  h.magic = NPU_ISA_MAGIC;
  h.size = 32;
  std::memcpy(empty.data(), &h, sizeof h);
  EXPECT_EQ(err(empty), "header: num_cmds is 0");

  // Random garbage of every length never crashes; when it disassembles, it round-trips.
  std::mt19937_64 rng(7);
  int disassembled = 0;
  for (int i = 0; i < 2000; ++i) {
    Bytes b(i & 1 ? 32 + 128 * (rng() % 5) : rng() % 600);
    for (auto& x : b) x = static_cast<std::byte>(rng());
    if (i & 1) {  // plausible headers too
      npu_cmdbuf_header g = header_of(b);
      g.magic = NPU_ISA_MAGIC;
      g.size = static_cast<uint32_t>(b.size());
      if (i & 2) g.num_cmds = static_cast<uint32_t>((b.size() - 32) / 128);
      if (i & 4) g.reserved = 0;
      std::memcpy(b.data(), &g, sizeof g);
    }
    auto text = disassemble(b);
    if (text) {
      auto again = assemble(*text);
      ASSERT_TRUE(again) << again.error().message;
      EXPECT_TRUE(*again == b);
      ++disassembled;
    } else {
      EXPECT_EQ(text.error().code, EINVAL);
    }
  }
  EXPECT_GT(disassembled, 100);
}

TEST(Disasm, ValidationProblemsListEveryBadCommand) {
  auto ok_prog = assemble(read_text(NPU_SOURCE_DIR "/examples/conv2d_int8.npuasm"));
  ASSERT_TRUE(ok_prog);
  EXPECT_TRUE(validation_problems(*ok_prog, DeviceConfig{}).empty());

  auto bad = assemble(
      "pool kind=max dtype=fp32 in_h=4 in_w=4 channels=1 out_h=3 out_w=3 k_h=2 k_w=2 stride_h=2 "
      "stride_w=2\n"
      "reduce kind=9 outer=1 len=1 inner=1\n"
      "nop cp\n");
  ASSERT_TRUE(bad);
  auto problems = validation_problems(*bad, DeviceConfig{});
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_TRUE(problems[0].message.starts_with("command 0 (pool)")) << problems[0].message;
  EXPECT_TRUE(problems[1].message.starts_with("command 1 (reduce)")) << problems[1].message;
  EXPECT_EQ(problems[2].message, "command 2 (nop): last command must be end");
  EXPECT_EQ(validation_problems(Bytes(3), DeviceConfig{}).size(), 1u);
}

}  // namespace
}  // namespace npu::isa
