// The opcode table (npu/isa/opcodes.def through npu/isa/opcodes.h): lookups by value and by
// mnemonic, the engine and flag facts docs/isa.md states, and the names the tools print.
#include "npu/isa/opcodes.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "npu/isa/regions.h"
#include "npu/isa/timing.h"
#include "npu/isa/validate.h"

namespace npu::isa {
namespace {

uint8_t mask(std::initializer_list<uint8_t> engines) {
  uint8_t m = 0;
  for (uint8_t e : engines) m |= static_cast<uint8_t>(1u << e);
  return m;
}

TEST(Opcodes, EveryRowIsFoundByValueAndByMnemonic) {
  std::set<std::string> names;
  uint8_t previous = 0;
  for (const OpcodeInfo& op : opcodes()) {
    SCOPED_TRACE(op.mnemonic);
    EXPECT_GT(op.opcode, previous);  // opcode order
    previous = op.opcode;
    EXPECT_EQ(find_opcode(op.opcode), &op);
    EXPECT_EQ(find_opcode(std::string_view(op.mnemonic)), &op);
    EXPECT_STREQ(opcode_name(op.opcode), op.mnemonic);
    EXPECT_TRUE(names.insert(op.mnemonic).second);
  }
  EXPECT_EQ(find_opcode(uint8_t{0}), nullptr);
  EXPECT_EQ(find_opcode(uint8_t{0x3b}), nullptr);
  EXPECT_EQ(find_opcode("conv3d"), nullptr);
  EXPECT_STREQ(opcode_name(0xff), "unknown");
}

TEST(Opcodes, EnginesAreThoseOfTheSpec) {
  const uint8_t any = mask(
      {NPU_ENGINE_CP, NPU_ENGINE_DMA_IN, NPU_ENGINE_DMA_OUT, NPU_ENGINE_MATRIX, NPU_ENGINE_VECTOR});
  EXPECT_EQ(find_opcode(NPU_OP_END)->engines, mask({NPU_ENGINE_CP}));
  EXPECT_EQ(find_opcode(NPU_OP_FENCE)->engines, mask({NPU_ENGINE_CP}));
  EXPECT_EQ(find_opcode(NPU_OP_MARKER)->engines, any);
  EXPECT_EQ(find_opcode(NPU_OP_NOP)->engines, any);
  EXPECT_EQ(find_opcode(NPU_OP_SEM_SIGNAL)->engines, any & ~mask({NPU_ENGINE_CP}));
  EXPECT_EQ(find_opcode(NPU_OP_SEM_WAIT)->engines, any & ~mask({NPU_ENGINE_CP}));
  EXPECT_EQ(find_opcode(NPU_OP_DMA_LOAD)->engines, mask({NPU_ENGINE_DMA_IN}));
  EXPECT_EQ(find_opcode(NPU_OP_DMA_STORE)->engines, mask({NPU_ENGINE_DMA_OUT}));
  EXPECT_EQ(find_opcode(NPU_OP_CONV2D)->engines, mask({NPU_ENGINE_MATRIX}));
  EXPECT_EQ(find_opcode(NPU_OP_MATMUL)->engines, mask({NPU_ENGINE_MATRIX}));
  for (uint8_t op = NPU_OP_ELTWISE; op <= NPU_OP_MOMENTS; ++op) {
    EXPECT_EQ(find_opcode(op)->engines, mask({NPU_ENGINE_VECTOR})) << opcode_name(op);
  }
  EXPECT_EQ(find_opcode(NPU_OP_CONV2D)->sole_engine(), NPU_ENGINE_MATRIX);
  EXPECT_EQ(find_opcode(NPU_OP_NOP)->sole_engine(), std::nullopt);
  EXPECT_TRUE(opcode_allows_engine(NPU_OP_SEM_WAIT, NPU_ENGINE_VECTOR));
  EXPECT_FALSE(opcode_allows_engine(NPU_OP_SEM_WAIT, NPU_ENGINE_CP));
  EXPECT_FALSE(opcode_allows_engine(NPU_OP_NOP, NPU_NUM_ENGINES));
  EXPECT_FALSE(opcode_allows_engine(0x3b, NPU_ENGINE_VECTOR));
}

TEST(Opcodes, FlagsAndTheirNames) {
  const OpcodeInfo* mm = find_opcode(NPU_OP_MATMUL);
  EXPECT_EQ(mm->flags, NPU_MM_FLAG_BIAS | NPU_MM_FLAG_TRANSPOSE_B);
  ASSERT_EQ(mm->flag_names.size(), 2u);
  EXPECT_STREQ(mm->flag_names[0].name, "bias");
  EXPECT_STREQ(mm->flag_names[1].name, "transpose_b");
  EXPECT_EQ(find_opcode(NPU_OP_FENCE)->flags, NPU_FENCE_FLAG_IRQ | NPU_FENCE_FLAG_PREEMPT);
  ASSERT_EQ(find_opcode(NPU_OP_FENCE)->flag_names.size(), 2u);
  EXPECT_STREQ(find_opcode(NPU_OP_FENCE)->flag_names[1].name, "preempt");
  EXPECT_EQ(find_opcode(NPU_OP_CONV2D)->flags, NPU_MM_FLAG_BIAS);
  EXPECT_EQ(find_opcode(NPU_OP_POOL)->flags, NPU_POOL_FLAG_COUNT_PAD);
  EXPECT_EQ(find_opcode(NPU_OP_SOFTMAX)->flags, NPU_SOFTMAX_FLAG_LOG);
  EXPECT_EQ(find_opcode(NPU_OP_ELTWISE)->flags, 0);
  EXPECT_TRUE(find_opcode(NPU_OP_ELTWISE)->flag_names.empty());
}

TEST(Opcodes, ControlCommandsTouchNoMemoryAndNeedNoFeature) {
  for (const OpcodeInfo& op : opcodes()) {
    SCOPED_TRACE(op.mnemonic);
    EXPECT_EQ(op.data, op.opcode >= NPU_OP_DMA_LOAD);
    if (op.data) continue;
    npu_cmd c{};
    c.hdr.opcode = op.opcode;
    std::vector<Region> regions;
    ASSERT_TRUE(command_regions(c, regions));
    EXPECT_TRUE(regions.empty());
    EXPECT_EQ(command_features(c), 0u);
  }
}

TEST(Opcodes, EngineNames) {
  EXPECT_STREQ(engine_name(NPU_ENGINE_CP), "cp");
  EXPECT_STREQ(engine_name(NPU_ENGINE_VECTOR), "vector");
  EXPECT_STREQ(engine_name(NPU_NUM_ENGINES), "unknown");
  for (uint8_t e = 0; e < NPU_NUM_ENGINES; ++e) EXPECT_EQ(find_engine(engine_name(e)), e);
  EXPECT_EQ(find_engine("gpu"), std::nullopt);
}

}  // namespace
}  // namespace npu::isa
