// npu-submit --racecheck on the racy example (examples/race.npuasm): both hazards named with
// their commands and markers, exit status 3 with one line on stderr, the JSON report, flow
// arrows in the trace; NPU_RACECHECK=1 logs them for a program that does not ask; a deadlock
// is refused with one line naming the command.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "npu_isa.h"
#include "tool_runner.h"

namespace npu::tools::testing {
namespace {

using nlohmann::json;

constexpr const char* kRaw =
    "  RAW sram [0x0, 0x80): command 1 (dma_load on dma_in, marker 10) writes, command 4 "
    "(activation on vector, marker 20) reads; no semaphore or fence orders them\n";
constexpr const char* kWar =
    "  WAR sram [0x0, 0x80): command 4 (activation on vector, marker 20) reads, command 8 "
    "(dma_load on dma_in, marker 11) writes; no semaphore or fence orders them\n";

class RaceExample : public ::testing::Test {
 protected:
  RaceExample() {
    Proc as = run(
        {NPU_AS_PATH, NPU_SOURCE_DIR "/examples/race.npuasm", "-o", bin_.string(), "--validate"},
        dir_);
    EXPECT_EQ(as.status, 0) << as.err;
    std::vector<std::byte> in(256);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::byte>(i * 7);
    write_bytes(in_, in);
  }
  Proc submit(std::vector<std::string> extra) {
    std::vector<std::string> argv = {NPU_SUBMIT_PATH, bin_.string(),
                                     "--buffer",      "0x100000000=" + in_.string() + ":ro",
                                     "--buffer",      "0x100100000=size:256"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run(argv, dir_);
  }

  fs::path dir_ = work_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::path bin_ = dir_ / "race.bin";
  fs::path in_ = dir_ / "in.bin";
};

TEST_F(RaceExample, RacecheckNamesBothCommandsAndExitsThree) {
  Proc r = submit({"--racecheck"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.out.find(std::string("racecheck: 2 hazards\n") + kRaw + kWar), std::string::npos)
      << r.out;
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_TRUE(
      r.err.starts_with("npu-submit: racecheck: 2 hazards, the first: RAW sram [0x0, "
                        "0x80): command 1 (dma_load on dma_in, marker 10) writes"))
      << r.err;
}

TEST_F(RaceExample, JsonReportAndTraceFlows) {
  Proc r = submit({"--racecheck", "--json", "--trace", (dir_ / "t.json").string()});
  EXPECT_EQ(r.status, 3) << r.err;
  const json doc = json::parse(r.out);
  const json& rc = doc["racecheck"];
  EXPECT_EQ(rc["checked"], true);
  EXPECT_EQ(rc["partial"], false);
  EXPECT_EQ(rc["total"], 2);
  ASSERT_EQ(rc["hazards"].size(), 2u);
  const json& h = rc["hazards"][1];
  EXPECT_EQ(h["kind"], "WAR");
  EXPECT_EQ(h["space"], "sram");
  EXPECT_EQ(h["begin"], 0);
  EXPECT_EQ(h["end"], 128);
  EXPECT_EQ(h["first"]["cmd_index"], 4);
  EXPECT_EQ(h["first"]["engine"], "vector");
  EXPECT_EQ(h["first"]["opcode"], "activation");
  EXPECT_EQ(h["first"]["label"], "marker 20");
  EXPECT_EQ(h["second"]["cmd_index"], 8);
  EXPECT_EQ(h["second"]["label"], "marker 11");

  // One flow arrow per hazard: a start on one command's track, an end on the other's.
  const json trace = json::parse(slurp(dir_ / "t.json"));
  int starts = 0, ends = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") != "hazard") continue;
    starts += e["ph"] == "s";
    ends += e["ph"] == "f";
    EXPECT_TRUE(e["tid"] == NPU_ENGINE_DMA_IN || e["tid"] == NPU_ENGINE_VECTOR) << e;
  }
  EXPECT_EQ(starts, 2);
  EXPECT_EQ(ends, 2);
  // Without --racecheck there is no racecheck object (a clean example: a racy buffer run
  // without the checker races on the emulator's host memory too).
  Proc as = run(
      {NPU_AS_PATH, NPU_SOURCE_DIR "/examples/dma_copy.npuasm", "-o", (dir_ / "copy.bin").string()},
      dir_);
  ASSERT_EQ(as.status, 0) << as.err;
  Proc plain = run({NPU_SUBMIT_PATH, (dir_ / "copy.bin").string(), "--buffer",
                    "0x100100000=size:144", "--buffer", "0x100000000=size:64", "--json"},
                   dir_);
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_TRUE(json::parse(plain.out)["racecheck"].is_null());
}

TEST_F(RaceExample, EnvironmentChecksEveryJobAndLogs) {
  ::setenv("NPU_RACECHECK", "1", 1);
  Proc r = submit({});
  ::unsetenv("NPU_RACECHECK");
  EXPECT_EQ(r.status, 0) << r.err;  // the tool did not ask: the driver logs what it found
  EXPECT_NE(r.err.find("racecheck: 2 hazards, the first: RAW sram [0x0, 0x80) between command 1 "
                       "(dma_load on dma_in) and command 4 (activation on vector)"),
            std::string::npos)
      << r.err;
}

TEST(RacecheckTools, DeadlockIsRefusedWithOneLineNamingTheCommand) {
  const fs::path dir = work_dir("racecheck_deadlock");
  const fs::path src = dir / "deadlock.npuasm";
  std::ofstream(src) << "sem_wait matrix sem=0 count=1\nsem_signal matrix sem=1 count=1\n"
                        "sem_wait vector sem=1 count=1\nsem_signal vector sem=0 count=1\nend\n";
  Proc as = run({NPU_AS_PATH, src.string(), "-o", (dir / "d.bin").string()}, dir);
  ASSERT_EQ(as.status, 0) << as.err;
  Proc r = run({NPU_SUBMIT_PATH, (dir / "d.bin").string()}, dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_TRUE(
      r.err.starts_with("npu-submit: finalize: command 0 (sem_wait): field sem: "
                        "deadlock: semaphore 0 holds 0 of the 1 this wait needs; its next "
                        "signal, command 3 (sem_signal on semaphore 0) on vector, waits "
                        "behind command 2 (sem_wait on semaphore 1)"))
      << r.err;
  // npu-as --validate names the source line.
  Proc v = run({NPU_AS_PATH, src.string(), "-o", (dir / "d.bin").string(), "--validate"}, dir);
  EXPECT_EQ(v.status, 1);
  EXPECT_NE(v.err.find("deadlock.npuasm:1: command 0 (sem_wait): field sem: deadlock"),
            std::string::npos)
      << v.err;
}

}  // namespace
}  // namespace npu::tools::testing
