// RunOptions::racecheck: every device segment runs under the synchronization checker; the
// hazards come back per segment, merged for the run with their commands named by segment and
// layer (the package's layer report, layers separated by FENCEs), and as flow arrows in the
// model's trace.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "npu/isa/builder.h"
#include "npu/runtime/model.h"
#include "test_packages.h"

namespace {

using npu::Model;
using namespace npu::runtime_test;

/// relu_softmax_package() with its device segment as two FENCE-separated layers, "relu"
/// (load, relu) and "store"; `racy` moves the vector engine's wait after the relu.
Package layered(bool racy) {
  Package p = relu_softmax_package();
  npu::isa::CommandBufferBuilder b;
  b.dma_load({.dram = kVa, .sram = 0, .elem_size = 4, .size = {8, 1, 1}});  // 0
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);                                       // 1
  if (!racy) b.sem_wait(NPU_ENGINE_VECTOR, 0);
  b.activation({.func = NPU_ACT_RELU, .shape = {1, 1, 1, 8}, .in_addr = 0, .out_addr = 4096});
  if (racy) b.sem_wait(NPU_ENGINE_VECTOR, 0);
  b.fence();
  b.dma_store({.dram = kVa + kStep, .sram = 4096, .elem_size = 4, .size = {8, 1, 1}});
  p.sections[0] = cmdbuf_section(b.finish());
  npu::format::LayerReport relu, store;
  relu.name = "relu";
  relu.op = "Relu";
  store.name = "store";
  store.op = "Copy";
  p.metadata.segments[0].layers = {relu, store};
  return p;
}

const std::vector<float> kX = {-1.0f, 0.5f, 2.0f, -3.0f, 1.0f, 0.0f, 4.0f, -0.25f};

using RacecheckTest = DeviceTest;

TEST_F(RacecheckTest, RacyLayerIsNamedInTheHazard) {
  auto model = Model::load(*dev_, layered(true), "racy.npub");
  ASSERT_TRUE(model) << model.error().message;
  npu::RunOptions o;
  o.racecheck = true;
  o.collect_profile = true;
  auto out = model->run({{"x", NpyArray::of<float>({1, 8}, kX)}}, o);
  ASSERT_TRUE(out) << out.error().message;  // hazards are not errors

  const npu::RunStats& st = model->last_stats();
  EXPECT_EQ(st.hazard_count(), 1u);
  ASSERT_TRUE(st.segments[0].hazards);
  EXPECT_TRUE(st.segments[0].hazards->checked);
  EXPECT_FALSE(st.segments[1].hazards);  // the host segment
  const npu::HazardReport merged = st.merged_hazards();
  EXPECT_TRUE(merged.checked);
  ASSERT_EQ(merged.hazards.size(), 1u);
  const npu::Hazard& h = merged.hazards[0];
  EXPECT_EQ(h.kind, npu::HazardKind::kRaw);
  EXPECT_EQ(h.first.cmd_index, 0u);
  EXPECT_EQ(h.second.cmd_index, 2u);
  const auto label = st.hazard_labels(model->package().metadata);
  EXPECT_EQ(label(0), "segment 'relu0', layer 'relu'");
  EXPECT_EQ(label(5), "segment 'relu0', layer 'store'");
  EXPECT_EQ(npu::describe_hazard(h, label),
            "RAW sram [0x0, 0x20): command 0 (dma_load on dma_in, segment 'relu0', layer 'relu') "
            "writes, command 2 (activation on vector, segment 'relu0', layer 'relu') reads; no "
            "semaphore or fence orders them");

  const std::string trace = model->trace_json();
  EXPECT_NE(trace.find("\"cat\":\"hazard\",\"ph\":\"s\""), std::string::npos) << trace;
  EXPECT_NE(trace.find("layer 'relu'"), std::string::npos);
}

TEST_F(RacecheckTest, SynchronizedModelIsCheckedAndClean) {
  auto model = Model::load(*dev_, layered(false), "ok.npub");
  ASSERT_TRUE(model) << model.error().message;
  npu::RunOptions o;
  o.racecheck = true;
  auto out = model->run({{"x", NpyArray::of<float>({1, 8}, kX)}}, o);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(model->last_stats().hazard_count(), 0u);
  EXPECT_TRUE(model->last_stats().merged_hazards().checked);

  // Without the option nothing is checked or read.
  auto plain = model->run({{"x", NpyArray::of<float>({1, 8}, kX)}});
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_FALSE(model->last_stats().segments[0].hazards);
  EXPECT_FALSE(model->last_stats().merged_hazards().checked);
  EXPECT_EQ(plain->at("y").values<float>(), out->at("y").values<float>());
}

}  // namespace
