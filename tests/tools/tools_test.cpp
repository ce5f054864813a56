// Tests of the device tools (npu-info, npu-submit raw mode) and of the libnpu pieces they are
// thin shells over: spec parsing, device report, job report, trace writer, run_raw_job().
// The tools are run as subprocesses (paths from CMake); examples/*.npuasm are assembled with
// npu-as, submitted with the buffers their "# buffer:" header lines name, and the dumped
// outputs are compared with the reference interpreter.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "npu/device.h"
#include "npu/device_report.h"
#include "npu/isa/asm.h"
#include "npu/isa/device_config.h"
#include "npu/isa/validate.h"
#include "npu/job_report.h"
#include "npu/raw_job.h"
#include "npu/ref/interp.h"
#include "npu/trace.h"
#include "tool_runner.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using npu::tools::testing::count_lines;
using npu::tools::testing::Proc;
using npu::tools::testing::read_bytes;
using npu::tools::testing::run;
using npu::tools::testing::slurp;
using npu::tools::testing::work_dir;
using npu::tools::testing::write_bytes;

// One "# buffer: ADDR in|out DTYPE BYTES" line of an example.
struct ExampleBuffer {
  uint64_t address = 0;
  bool output = false;
  std::string dtype;
  uint64_t size = 0;
};

std::vector<ExampleBuffer> example_buffers(const std::string& text) {
  std::vector<ExampleBuffer> out;
  static const std::regex re(
      R"(^# buffer: (0x[0-9a-fA-F]+) (in|out) (int8|uint8|int32|fp32|qparams) ([0-9]+)\b)");
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, re)) continue;
    out.push_back({std::stoull(m[1].str(), nullptr, 16), m[2].str() == "out", m[3].str(),
                   std::stoull(m[4].str())});
  }
  return out;
}

// Small deterministic contents per dtype (an LCG seeded by the address).
std::vector<std::byte> make_input(const ExampleBuffer& b) {
  uint32_t state = static_cast<uint32_t>(b.address >> 12) * 2654435761u + 12345u;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  std::vector<std::byte> bytes(b.size);
  if (b.dtype == "fp32") {
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      const float v = static_cast<float>(static_cast<int>(next() % 257) - 128) / 64.0f;
      std::memcpy(&bytes[i], &v, 4);
    }
  } else if (b.dtype == "qparams") {
    for (size_t i = 0; i + 16 <= bytes.size(); i += 16) {
      const npu_chan_qparams q{static_cast<int32_t>(next() % 201) - 100,
                               (1 << 30) + static_cast<int32_t>(next() % (1 << 20)), 38,
                               static_cast<int32_t>(next() % 5) - 2};
      std::memcpy(&bytes[i], &q, sizeof(q));
    }
  } else {
    for (auto& x : bytes) x = static_cast<std::byte>(next() & 0xff);
  }
  return bytes;
}

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// The reference result: every buffer after run_program on the assembled bytes.
std::map<uint64_t, std::vector<std::byte>> reference_outputs(
    const std::vector<std::byte>& cmdbuf, const std::vector<ExampleBuffer>& buffers,
    const std::map<uint64_t, std::vector<std::byte>>& inputs) {
  const npu::isa::DeviceConfig cfg;
  auto program = npu::isa::validate(cmdbuf, cfg);
  EXPECT_TRUE(program) << program.error().message;
  std::map<uint64_t, std::vector<std::byte>> mem;
  if (!program) return mem;
  npu::ref::FlatDram dram;
  for (const auto& b : buffers) {
    auto& m = mem[b.address];
    m = b.output ? std::vector<std::byte>(b.size) : inputs.at(b.address);
    EXPECT_TRUE(dram.map(b.address, m));
  }
  std::vector<std::byte> sram(cfg.sram_size);
  auto r = npu::ref::run_program(*program, sram, dram);
  EXPECT_TRUE(r) << r.error().message;
  return mem;
}

void expect_same(const std::vector<std::byte>& got, const std::vector<std::byte>& want,
                 const std::string& dtype, bool exact, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  if (exact || dtype != "fp32") {
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], want[i]) << what << ": first difference at byte " << i;
    }
    return;
  }
  for (size_t i = 0; i + 4 <= got.size(); i += 4) {
    float g, w;
    std::memcpy(&g, &got[i], 4);
    std::memcpy(&w, &want[i], 4);
    ASSERT_NEAR(g, w, 1e-5f * std::max(1.0f, std::fabs(w))) << what << ": element " << i / 4;
  }
}

// ---------------------------------------------------------------------------------------
// Spec parsing

TEST(BufferSpec, ParsesFileSizeAndReadOnly) {
  auto a = npu::parse_buffer_spec("0x100000000=in.bin");
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->address, 0x100000000u);
  EXPECT_EQ(a->file, "in.bin");
  EXPECT_EQ(a->size, 0u);
  EXPECT_FALSE(a->read_only);

  auto b = npu::parse_buffer_spec("4294967296=size:0x90:ro");
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->address, 0x100000000u);
  EXPECT_TRUE(b->file.empty());
  EXPECT_EQ(b->size, 144u);
  EXPECT_TRUE(b->read_only);

  auto c = npu::parse_buffer_spec("0x1000=dir/a:b.bin:ro");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->file, "dir/a:b.bin");
  EXPECT_TRUE(c->read_only);
}

TEST(BufferSpec, RejectsMalformedWithTheSpecInTheMessage) {
  for (const char* bad : {"", "0x1000", "=in.bin", "zz=in.bin", "0x1000=", "0x1000=size:",
                          "0x1000=size:0", "0x1000=size:12k", "0x1000=:ro", "0x=a"}) {
    auto r = npu::parse_buffer_spec(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, EINVAL);
    EXPECT_NE(r.error().message.find(std::string("--buffer '") + bad + "'"), std::string::npos)
        << r.error().message;
  }
  EXPECT_NE(npu::parse_buffer_spec("0x1000=size:0").error().message.find("at least 1"),
            std::string::npos);
}

TEST(DumpSpec, ParsesAndRejects) {
  auto d = npu::parse_dump_spec("0x100100000:144=out.bin");
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->address, 0x100100000u);
  EXPECT_EQ(d->length, 144u);
  EXPECT_EQ(d->file, "out.bin");
  for (const char* bad : {"0x1000=out.bin", "0x1000:0=o", "0x1000:4=", "x:4=o", "0x10:y=o",
                          "0xffffffffffffffff:2=o"}) {
    EXPECT_FALSE(npu::parse_dump_spec(bad)) << bad;
  }
}

TEST(BufferSpec, OverlapsAreRejected) {
  std::vector<npu::BufferSpec> specs = {{0x1000, "", 0x100, false}, {0x1080, "", 0x10, false}};
  auto r = npu::check_buffer_specs(specs);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("overlaps"), std::string::npos);
  specs[1].address = 0x1100;
  EXPECT_TRUE(npu::check_buffer_specs(specs));
}

TEST(RawJob, MagicAndFileNames) {
  const std::vector<std::byte> npuc = {std::byte{'N'}, std::byte{'P'}, std::byte{'U'},
                                       std::byte{'C'}, std::byte{0}};
  EXPECT_TRUE(npu::is_command_buffer(npuc));
  EXPECT_FALSE(npu::is_command_buffer(std::span(npuc).subspan(1)));
  EXPECT_EQ(npu::buffer_file_name(0x100100000), "buf_0x100100000.bin");
}

TEST(RawJob, BuffersFromMemory) {
  // examples/dma_copy.npuasm: the 4x4 fp32 tile at IN comes back padded to 6x6 at OUT.
  std::ifstream in(std::string(NPU_SOURCE_DIR) + "/examples/dma_copy.npuasm");
  std::stringstream text;
  text << in.rdbuf();
  auto code = npu::isa::assemble(text.str(), "dma_copy.npuasm");
  ASSERT_TRUE(code) << code.error().message;
  std::vector<float> tile(16);
  for (size_t i = 0; i < tile.size(); ++i) tile[i] = static_cast<float>(i + 1);
  npu::BufferSpec src{0x100000000, "", 0, true};
  src.data = std::as_bytes(std::span(tile));
  const std::vector<npu::BufferSpec> specs = {src, {0x100100000, "", 144, false}};
  auto dev = npu::Device::open("emu:");
  ASSERT_TRUE(dev) << dev.error().message;
  auto run = npu::run_raw_job(*dev, *code, specs);
  ASSERT_TRUE(run) << run.error().message;
  ASSERT_TRUE(run->ok());
  EXPECT_EQ(run->specs[0].size, 64u);
  EXPECT_TRUE(run->specs[0].data.empty());  // the caller's memory is not kept
  auto out = run->read_range(0x100100000, 144);
  ASSERT_TRUE(out) << out.error().message;
  std::vector<float> padded(36);
  std::memcpy(padded.data(), out->data(), out->size());
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 6; ++c) {
      const bool inside = r >= 1 && r <= 4 && c >= 1 && c <= 4;
      EXPECT_EQ(padded[r * 6 + c], inside ? tile[(r - 1) * 4 + (c - 1)] : 0.0f) << r << "," << c;
    }
  }
  // A spec with neither a size nor data, and one with both a file and data, are refused.
  auto empty = npu::run_raw_job(*dev, *code, std::vector<npu::BufferSpec>{{0x100100000, "", 0}});
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("buffer 0x100100000: size must be at least 1"),
            std::string::npos);
  npu::BufferSpec both = src;
  both.file = "x.bin";
  auto twice = npu::run_raw_job(*dev, *code, std::vector<npu::BufferSpec>{both});
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("both a file and data"), std::string::npos);
}

// ---------------------------------------------------------------------------------------
// Trace writer and job report on a synthetic profile

npu::JobProfile synthetic_profile() {
  npu::JobProfile p;
  p.seqno = 3;
  p.cycles = 2000;
  p.busy_cycles[NPU_ENGINE_DMA_IN] = 500;
  p.busy_cycles[NPU_ENGINE_MATRIX] = 1000;
  p.dma_bytes_in = 64;
  p.timeline = {{0, NPU_ENGINE_CP, NPU_OP_MARKER, 10, 10},
                {1, NPU_ENGINE_DMA_IN, NPU_OP_DMA_LOAD, 12, 512},
                {2, NPU_ENGINE_MATRIX, NPU_OP_MATMUL, 600, 1600},
                {3, NPU_ENGINE_CP, NPU_OP_FENCE, 1600, 1700},
                {4, NPU_ENGINE_CP, NPU_OP_END, 1700, 1702}};
  return p;
}

std::vector<npu_cmd> synthetic_commands() {
  std::vector<npu_cmd> cmds(5);
  std::memset(cmds.data(), 0, cmds.size() * sizeof(npu_cmd));
  cmds[0].hdr.opcode = NPU_OP_MARKER;
  cmds[0].marker.id = 7;
  cmds[1].hdr.opcode = NPU_OP_DMA_LOAD;
  cmds[2].hdr.opcode = NPU_OP_MATMUL;
  cmds[3].hdr.opcode = NPU_OP_FENCE;
  cmds[3].hdr.flags = NPU_FENCE_FLAG_IRQ;
  cmds[3].fence.value = 42;
  cmds[4].hdr.opcode = NPU_OP_END;
  return cmds;
}

TEST(ChromeTrace, OneTrackPerEngineOneEventPerCommand) {
  const auto cmds = synthetic_commands();
  npu::TraceOptions o;
  o.clock_hz = 500'000'000;  // 2 ns per cycle
  o.commands = cmds;
  const json doc = json::parse(npu::chrome_trace_json(synthetic_profile(), o));
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  EXPECT_EQ(doc["otherData"]["cycles"], 2000);
  std::set<int> tracks;
  std::map<std::string, json> by_name;
  int complete = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["name"] == "thread_name") tracks.insert(e["tid"].get<int>());
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_TRUE(e["args"].contains("cmd_index"));
    }
    by_name[e["name"].get<std::string>()] = e;
  }
  EXPECT_EQ(tracks, (std::set<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(complete, 4);  // everything but the marker
  const json& load = by_name.at("dma_load");
  EXPECT_EQ(load["ph"], "X");
  EXPECT_EQ(load["tid"], NPU_ENGINE_DMA_IN);
  EXPECT_DOUBLE_EQ(load["ts"].get<double>(), 0.024);  // 12 cycles at 500 MHz
  EXPECT_DOUBLE_EQ(load["dur"].get<double>(), 1.0);   // 500 cycles
  EXPECT_EQ(load["args"]["cmd_index"], 1);
  EXPECT_EQ(by_name.at("marker 7")["ph"], "i");
  EXPECT_EQ(by_name.at("marker 7")["args"]["id"], 7);
  const json& irq = by_name.at("fence irq 42");
  EXPECT_EQ(irq["ph"], "i");
  EXPECT_EQ(irq["s"], "g");
  EXPECT_DOUBLE_EQ(irq["ts"].get<double>(), 3.4);
}

// A job preempted at a safe point (API 1.4): the switch is a "preempted" span on the command
// processor's track, and the job report counts it apart from the commands.
TEST(ChromeTrace, PreemptionIsASpanAndTheReportCountsIt) {
  npu::JobProfile p = synthetic_profile();
  p.timeline.insert(p.timeline.begin() + 4,
                    {3, NPU_ENGINE_CP, DRM_NPU_PROFILE_PREEMPT, 1700, 6700});
  p.timeline.back() = {4, NPU_ENGINE_CP, NPU_OP_END, 6700, 6702};
  p.cycles = 7000;
  p.preemptions = 1;
  p.preempt_cycles = 5000;
  EXPECT_EQ(p.commands_executed(), 5u);
  const auto cmds = synthetic_commands();
  npu::TraceOptions o;
  o.clock_hz = 1'000'000'000;
  o.commands = cmds;
  const json doc = json::parse(npu::chrome_trace_json(p, o));
  int spans = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["name"] != "preempted") continue;
    ++spans;
    EXPECT_EQ(e["ph"], "X");
    EXPECT_EQ(e["tid"], NPU_ENGINE_CP);
    EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 5.0);  // 5000 cycles at 1 GHz
    EXPECT_EQ(e["args"]["safe_point"], 3);
  }
  EXPECT_EQ(spans, 1);
}

TEST(ChromeTrace, WithoutCommandsAndWriteErrors) {
  const json doc = json::parse(npu::chrome_trace_json(synthetic_profile()));
  bool marker = false, irq = false;
  for (const auto& e : doc["traceEvents"]) {
    marker |= e["name"] == "marker";
    irq |= e["name"].get<std::string>().starts_with("fence irq");
  }
  EXPECT_TRUE(marker);
  EXPECT_FALSE(irq);
  auto w = npu::write_chrome_trace(synthetic_profile(), "/nonexistent-dir/t.json");
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("trace: cannot write '/nonexistent-dir/t.json'"),
            std::string::npos);
}

TEST(JobReport, TextAndJson) {
  const auto cmds = synthetic_commands();
  npu::JobReport r;
  r.result.status = npu::JobStatus::kError;
  r.result.cycles = 2000;
  r.result.fault = {DRM_NPU_FAULT_MMU, NPU_ENGINE_DMA_IN, 1, 0x200000000};
  r.profile = synthetic_profile();
  r.clock_hz = 1'000'000'000;
  r.commands = cmds;
  const std::string text = npu::format_job_report(r, true);
  EXPECT_NE(text.find("job error: 2000 cycles (2.000 us at 1 GHz)"), std::string::npos) << text;
  EXPECT_NE(text.find("fault: mmu on dma_in at command 1 (dma_load), address 0x200000000"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("matrix"), std::string::npos);
  EXPECT_NE(text.find("50.0%"), std::string::npos) << text;  // matrix 1000 / 2000
  const json j = json::parse(npu::job_report_json(r));
  EXPECT_EQ(j["status"], "error");
  EXPECT_EQ(j["fault"]["kind"], "mmu");
  EXPECT_EQ(j["fault"]["engine"], "dma_in");
  EXPECT_EQ(j["fault"]["opcode"], "dma_load");
  EXPECT_EQ(j["fault"]["address"], 0x200000000u);
  EXPECT_EQ(j["profile"]["engines"].size(), 5u);
  EXPECT_DOUBLE_EQ(j["profile"]["engines"][3]["utilization"].get<double>(), 0.5);
}

// ---------------------------------------------------------------------------------------
// Device report (library)

TEST(DeviceReport, DefaultEmulator) {
  auto dev = npu::Device::open("emu:");
  ASSERT_TRUE(dev) << dev.error().message;
  auto r = npu::query_device_report(*dev);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->engines.size(), r->params.num_engines);
  const std::string table = npu::format_device_report(*r);
  for (const char* s :
       {"identity", "npu-emu", "emulator", "2 MiB (2097152 bytes) in 16 banks", "1 GHz",
        "skip_validation", "transcendental", "queue depth", "matrix", "jobs completed",
        "preemption", "at safe points, 5000 cycles a switch", "quota (this file: used / limit)",
        "jobs in flight", "0 / 4096", "contexts", "0 / 64"}) {
    EXPECT_NE(table.find(s), std::string::npos) << s << "\n" << table;
  }
  ASSERT_TRUE(r->quota);
  EXPECT_GT(r->quota->bo_memory_limit, 0u);
  const json j = json::parse(npu::device_report_json(*r));
  EXPECT_EQ(j["identity"]["platform"], "emulator");
  EXPECT_EQ(j["parameters"]["sram_size"], 2u << 20);
  EXPECT_EQ(j["engines"].size(), r->engines.size());
  EXPECT_EQ(j["counters"]["busy_cycles"].size(), r->engines.size());
  EXPECT_EQ(j["counters"]["preemptions"], 0);
  EXPECT_EQ(j["quota"]["jobs_in_flight_limit"], 4096);
  EXPECT_EQ(j["parameters"]["preemption"]["switch_cycles"], 5000);
  EXPECT_EQ(npu::capability_names(DRM_NPU_CAP_INT8 | (1ull << 40)),
            (std::vector<std::string>{"int8", "bit 40"}));
}

// ---------------------------------------------------------------------------------------
// npu-info

TEST(NpuInfo, JsonIsParseableAndComplete) {
  const fs::path dir = work_dir("info_json");
  Proc r = run({NPU_INFO_PATH, "--json"}, dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  const json j = json::parse(r.out);
  for (const char* key :
       {"schema_version", "device", "identity", "parameters", "engines", "counters"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key :
       {"name", "device_id", "revision", "platform", "api_version", "isa_version"}) {
    EXPECT_TRUE(j["identity"].contains(key)) << key;
  }
  for (const char* key : {"sram_size", "sram_banks", "clock_hz", "num_semaphores", "watchdog_ms",
                          "va_range", "capabilities", "features"}) {
    EXPECT_TRUE(j["parameters"].contains(key)) << key;
  }
  for (const auto& e : j["engines"]) {
    for (const char* key : {"id", "name", "throughput", "latency", "queue_depth"}) {
      EXPECT_TRUE(e.contains(key)) << key;
    }
  }
  EXPECT_EQ(j["device"], "emu:");
}

TEST(NpuInfo, TableAndDeviceConfig) {
  const fs::path dir = work_dir("info_table");
  const fs::path cfg = dir / "small.json";
  std::ofstream(cfg) << R"({"name": "tiny-npu", "sram_size": 1048576, "sram_banks": 8})";
  Proc r = run({NPU_INFO_PATH, "--device-config", cfg.string()}, dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("tiny-npu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 MiB (1048576 bytes) in 8 banks"), std::string::npos) << r.out;

  Proc j = run({NPU_INFO_PATH, "--json", "--device", "emu:" + cfg.string()}, dir);
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(json::parse(j.out)["parameters"]["sram_banks"], 8);
}

TEST(NpuInfo, ErrorsAreOneLine) {
  const fs::path dir = work_dir("info_errors");
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {NPU_INFO_PATH, "--device-config", (dir / "missing.json").string()},
           {NPU_INFO_PATH, "--device", "nosuch:thing"},
           {NPU_INFO_PATH, "--bogus"}}) {
    Proc r = run(argv, dir);
    EXPECT_EQ(r.status, 1) << argv.back();
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
    EXPECT_TRUE(r.err.starts_with("npu-info: ")) << r.err;
  }
}

// ---------------------------------------------------------------------------------------
// npu-submit on the examples

struct ExampleCase {
  const char* name;
  bool exact;  // compare fp32 outputs bit for bit too
};

class Example : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(Example, MatchesReferenceInterpreter) {
  const ExampleCase c = GetParam();
  const fs::path dir = work_dir(std::string("example_") + c.name);
  const fs::path src = fs::path(NPU_SOURCE_DIR) / "examples" / (std::string(c.name) + ".npuasm");
  const auto buffers = example_buffers(slurp(src));
  ASSERT_FALSE(buffers.empty()) << "no '# buffer:' lines in " << src;

  const fs::path prog = dir / "prog.bin";
  Proc as = run({NPU_AS_PATH, src.string(), "-o", prog.string()}, dir);
  ASSERT_EQ(as.status, 0) << as.err;

  std::vector<std::string> argv = {NPU_SUBMIT_PATH, prog.string(),
                                   "--output-dir",  (dir / "out").string(),
                                   "--trace",       (dir / "trace.json").string(),
                                   "--stats",       "--racecheck"};
  std::map<uint64_t, std::vector<std::byte>> inputs;
  for (const auto& b : buffers) {
    if (b.output) {
      argv.push_back("--buffer=" + hex(b.address) + "=size:" + std::to_string(b.size));
      argv.push_back("--dump=" + hex(b.address) + ":" + std::to_string(b.size) + "=" + "out_" +
                     hex(b.address) + ".bin");
    } else {
      inputs[b.address] = make_input(b);
      const fs::path file = dir / ("in_" + hex(b.address) + ".bin");
      write_bytes(file, inputs[b.address]);
      argv.push_back("--buffer=" + hex(b.address) + "=" + file.string() + ":ro");
    }
  }
  Proc sub = run(argv, dir);
  ASSERT_EQ(sub.status, 0) << sub.err << sub.out;
  EXPECT_TRUE(sub.err.empty()) << sub.err;
  EXPECT_NE(sub.out.find("job ok: "), std::string::npos) << sub.out;
  EXPECT_NE(sub.out.find("utilization"), std::string::npos) << sub.out;
  EXPECT_NE(sub.out.find("racecheck: no hazards\n"), std::string::npos) << sub.out;

  const auto want = reference_outputs(read_bytes(prog), buffers, inputs);
  for (const auto& b : buffers) {
    if (!b.output) continue;
    const fs::path out = dir / "out" / ("out_" + hex(b.address) + ".bin");
    ASSERT_TRUE(fs::exists(out)) << out;
    expect_same(read_bytes(out), want.at(b.address), b.dtype, c.exact,
                std::string(c.name) + " buffer " + hex(b.address));
  }

  const json trace = json::parse(slurp(dir / "trace.json"));
  int tracks = 0, complete = 0;
  for (const auto& e : trace["traceEvents"]) {
    tracks += e["name"] == "thread_name";
    complete += e["ph"] == "X";
  }
  EXPECT_EQ(tracks, 5);
  EXPECT_GT(complete, 2);
}

INSTANTIATE_TEST_SUITE_P(
    Tools, Example,
    ::testing::Values(ExampleCase{"dma_copy", true}, ExampleCase{"conv2d_int8", true},
                      ExampleCase{"pool", true}, ExampleCase{"sync", true},
                      ExampleCase{"transpose", true}, ExampleCase{"quant", true},
                      ExampleCase{"eltwise", false}, ExampleCase{"matmul", false},
                      ExampleCase{"conv2d_fp32", false}, ExampleCase{"conv2d_fp16", false},
                      ExampleCase{"scale_shift", false}, ExampleCase{"reduce", false},
                      ExampleCase{"moments", true}, ExampleCase{"softmax", false},
                      ExampleCase{"activation", false}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

// Every example has machine-readable buffer lines and at least one output.
TEST(Examples, AllHaveBufferLines) {
  for (const auto& e : fs::directory_iterator(fs::path(NPU_SOURCE_DIR) / "examples")) {
    if (e.path().extension() != ".npuasm") continue;
    const auto buffers = example_buffers(slurp(e.path()));
    EXPECT_TRUE(std::any_of(buffers.begin(), buffers.end(), [](auto& b) { return b.output; }))
        << e.path();
  }
}

// ---------------------------------------------------------------------------------------
// npu-submit details

class Submit : public ::testing::Test {
 protected:
  fs::path assemble(const std::string& name, const std::string& text) {
    const fs::path src = dir_ / (name + ".npuasm");
    std::ofstream(src) << text;
    const fs::path bin = dir_ / (name + ".bin");
    Proc r = run({NPU_AS_PATH, src.string(), "-o", bin.string()}, dir_);
    EXPECT_EQ(r.status, 0) << r.err;
    return bin;
  }
  fs::path dma_copy() {
    const fs::path bin = dir_ / "dma_copy.bin";
    Proc r =
        run({NPU_AS_PATH, NPU_SOURCE_DIR "/examples/dma_copy.npuasm", "-o", bin.string()}, dir_);
    EXPECT_EQ(r.status, 0) << r.err;
    return bin;
  }
  fs::path input64() {
    const fs::path in = dir_ / "in.bin";
    std::vector<std::byte> bytes(64);
    for (size_t i = 0; i < 64; ++i) bytes[i] = static_cast<std::byte>(i);
    write_bytes(in, bytes);
    return in;
  }
  fs::path dir_ = work_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
};

constexpr const char* kFaulting =
    "dma_load dram_addr=0x200000000 sram_addr=0 elem_size=1 size=64,1,1 dram_stride=1,64,64 "
    "sram_stride=64,64\nsem_signal dma_in sem=0 count=1\nsem_wait dma_out sem=0 count=1\n"
    "dma_store dram_addr=0x100100000 sram_addr=0 elem_size=1 size=64,1,1 dram_stride=1,64,64 "
    "sram_stride=64,64\nend\n";

TEST_F(Submit, FaultExitsTwoWithTheFaultLine) {
  const fs::path bin = assemble("fault", kFaulting);
  Proc r = run({NPU_SUBMIT_PATH, bin.string(), "--buffer", "0x100100000=size:64",
                "--skip-validation", "--trace", (dir_ / "t.json").string()},
               dir_);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("npu-submit: job error: mmu on dma_in at command 0 (dma_load), address "
                       "0x200000000"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("fault: mmu on dma_in at command 0 (dma_load), address 0x200000000"),
            std::string::npos)
      << r.out;

  Proc j = run({NPU_SUBMIT_PATH, bin.string(), "--buffer", "0x100100000=size:64",
                "--skip-validation", "--json"},
               dir_);
  EXPECT_EQ(j.status, 2);
  const json doc = json::parse(j.out);
  EXPECT_EQ(doc["status"], "error");
  EXPECT_EQ(doc["fault"]["kind"], "mmu");
  EXPECT_EQ(doc["fault"]["cmd_index"], 0);
}

// A job that never ends (a wait nothing signals, submitted unvalidated) times out; the device
// is reset under it as the tool exits. Logs go to stderr only, so --json stays one valid JSON
// document (the device's reset warning used to reach stdout through spdlog's default logger),
// and NPU_LOG_LEVEL=off leaves exactly the tool's one line (issue 14).
TEST_F(Submit, HungJobKeepsJsonStdoutAndHonoursTheLogLevel) {
  const fs::path bin = assemble("hang", "sem_wait vector sem=3 count=1\nend\n");
  const std::vector<std::string> argv = {NPU_SUBMIT_PATH, bin.string(),   "--skip-validation",
                                         "--json",        "--timeout-ms", "50"};
  ::setenv("NPU_LOG_LEVEL", "warn", 1);
  Proc j = run(argv, dir_);
  ::unsetenv("NPU_LOG_LEVEL");
  EXPECT_EQ(j.status, 2) << j.err;
  const json doc = json::parse(j.out);  // throws (fails the test) on anything but JSON
  EXPECT_EQ(doc["timed_out"], true);
  EXPECT_NE(j.err.find("[npu-device] [warning] reset while a job is running"), std::string::npos)
      << j.err;

  // At the default level the failure is the tool's one line (the driver plays the kernel:
  // its warnings are not the application's stderr).
  Proc d = run(argv, dir_);
  EXPECT_EQ(d.err, "npu-submit: job timed out: still pending after 50 ms\n");

  ::setenv("NPU_LOG_LEVEL", "off", 1);
  Proc quiet = run(argv, dir_);
  ::unsetenv("NPU_LOG_LEVEL");
  EXPECT_EQ(quiet.status, 2);
  EXPECT_EQ(quiet.err, "npu-submit: job timed out: still pending after 50 ms\n");
  EXPECT_TRUE(json::accept(quiet.out)) << quiet.out;
}

TEST_F(Submit, ValidationCatchesTheBadAddressFirst) {
  const fs::path bin = assemble("fault", kFaulting);
  Proc r = run({NPU_SUBMIT_PATH, bin.string(), "--buffer", "0x100100000=size:64"}, dir_);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("not inside a buffer"), std::string::npos) << r.err;
}

TEST_F(Submit, OutputDirWritesEveryWritableBuffer) {
  const fs::path bin = dma_copy();
  const fs::path in = input64();
  // Options before the positional: each --buffer takes exactly one value.
  Proc r = run({NPU_SUBMIT_PATH, "--buffer", "0x100000000=" + in.string() + ":ro", "--buffer",
                "0x100100000=size:144", "--output-dir", (dir_ / "o/p").string(), bin.string()},
               dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "o/p/buf_0x100100000.bin"));
  EXPECT_FALSE(fs::exists(dir_ / "o/p/buf_0x100000000.bin"));  // read-only: an input
  EXPECT_EQ(fs::file_size(dir_ / "o/p/buf_0x100100000.bin"), 144u);
  EXPECT_NE(r.out.find("wrote "), std::string::npos) << r.out;
}

// --priority sets the job's context (raw mode here; model mode passes it to the Model); a
// REALTIME context needs CAP_SYS_NICE, so without it (setpriv drops it from the bounding set,
// or the tests run unprivileged) the tool fails with the driver's reason in one line.
TEST_F(Submit, PriorityIsTheContextsAndRealtimeNeedsThePrivilege) {
  const fs::path bin = dma_copy();
  const fs::path in = input64();
  const std::vector<std::string> job = {bin.string(), "--buffer", "0x100000000=" + in.string(),
                                        "--buffer", "0x100100000=size:144"};
  for (const char* p : {"low", "normal", "high"}) {
    std::vector<std::string> argv = {NPU_SUBMIT_PATH, "--priority", p};
    argv.insert(argv.end(), job.begin(), job.end());
    Proc r = run(argv, dir_);
    EXPECT_EQ(r.status, 0) << p << ": " << r.err;
  }
  Proc bad = run({NPU_SUBMIT_PATH, "--priority", "urgent", bin.string()}, dir_);
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(count_lines(bad.err), 1u) << bad.err;
  EXPECT_NE(bad.err.find("--priority"), std::string::npos) << bad.err;

  if (!fs::exists("/usr/bin/setpriv")) GTEST_SKIP() << "no setpriv to drop CAP_SYS_NICE";
  std::vector<std::string> argv = {"/usr/bin/setpriv", "--bounding-set", "-sys_nice",  "--inh-caps",
                                   "-sys_nice",        NPU_SUBMIT_PATH,  "--priority", "realtime"};
  argv.insert(argv.end(), job.begin(), job.end());
  Proc r = run(argv, dir_);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("Operation not permitted"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("CAP_SYS_NICE"), std::string::npos) << r.err;
}

TEST_F(Submit, JsonReport) {
  const fs::path bin = dma_copy();
  const fs::path in = input64();
  Proc r = run({NPU_SUBMIT_PATH, bin.string(), "--buffer", "0x100000000=" + in.string(), "--buffer",
                "0x100100000=size:144", "--dump", "0x100100018:24=" + (dir_ / "row1.bin").string(),
                "--json"},
               dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_GT(j["cycles"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["profile"]["dma_bytes_in"], 64);
  EXPECT_EQ(j["profile"]["dma_bytes_out"], 144);
  EXPECT_EQ(j["outputs"].size(), 1u);
  // Row 1 of the padded 6x6 tile: 0, in[0..3], 0.
  const auto row = read_bytes(dir_ / "row1.bin");
  ASSERT_EQ(row.size(), 24u);
  float v[6];
  std::memcpy(v, row.data(), 24);
  const auto in_bytes = read_bytes(in);
  float in0;
  std::memcpy(&in0, in_bytes.data(), 4);
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], in0);
  EXPECT_EQ(v[5], 0.0f);
}

TEST_F(Submit, UsageErrorsAreOneLineExitOne) {
  const fs::path bin = dma_copy();
  const fs::path in = input64();
  const fs::path npub = dir_ / "model.npub";
  std::ofstream(npub) << "not yet";
  const fs::path junk = dir_ / "junk.bin";
  std::ofstream(junk) << "junk";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{npub.string(), "--input", "x=x.npy", "--output-dir", "o"},
       "not a model package (bad magic"},
      {{npub.string(), "--buffer", "0x100000000=size:4"}, "--buffer is for raw command buffers"},
      {{bin.string(), "--input", "x=x.npy"}, "--input is for model packages"},
      {{junk.string()}, "neither a command buffer (no NPUC magic) nor a model package"},
      {{(dir_ / "missing.bin").string()}, "missing.bin: cannot open: No such file or directory"},
      {{bin.string(), "--buffer", "0x100000000"}, "--buffer '0x100000000'"},
      {{bin.string(), "--buffer", "0x100000000=" + in.string(), "--buffer", "0x100000010=size:16"},
       "overlaps"},
      {{bin.string(), "--buffer", "0x100000000=size:0x80000000"}, "buffer 0x100000000: allocate"},
      {{bin.string(), "--buffer", "0x100000001=size:16"},
       "not a multiple of the device's va alignment"},
      {{bin.string(), "--buffer", "0x10000=size:16"}, "outside the device's va range"},
      {{bin.string(), "--buffer", "0x100000000=" + in.string(), "--buffer", "0x100100000=size:144",
        "--dump", "0x100200000:4=x.bin"},
       "not inside one buffer"},
      {{bin.string(), "--timeout-ms", "-5"}, "timeout"},
      {{}, "input"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {NPU_SUBMIT_PATH};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    Proc r = run(argv, dir_);
    EXPECT_EQ(r.status, 1) << c.message << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1u) << r.err;
    EXPECT_TRUE(r.err.starts_with("npu-submit: ")) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
}

// run_raw_job() directly (no subprocess): read-only buffers really are read-only.
TEST(RunRawJob, ReadOnlyBufferCannotBeWritten) {
  auto dev = npu::Device::open("emu:");
  ASSERT_TRUE(dev);
  auto text = slurp(fs::path(NPU_SOURCE_DIR) / "examples/dma_copy.npuasm");
  auto bytes = npu::isa::assemble(text);
  ASSERT_TRUE(bytes) << bytes.error().message;
  std::vector<npu::BufferSpec> specs = {{0x100000000, "", 64, false}, {0x100100000, "", 144, true}};
  auto run = npu::run_raw_job(*dev, *bytes, specs);
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code, EFAULT) << run.error().message;

  specs[1].read_only = false;
  auto ok = npu::run_raw_job(*dev, *bytes, specs);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_TRUE(ok->ok());
  ASSERT_TRUE(ok->profile);
  EXPECT_EQ(ok->profile->dma_bytes_out, 144u);
  EXPECT_TRUE(ok->read_range(0x100100000, 144));
  EXPECT_FALSE(ok->read_range(0x100100000, 145));
}

TEST(RunRawJob, TimeoutIsReportedNotAnError) {
  auto dev = npu::Device::open("emu:");
  ASSERT_TRUE(dev);
  // sem_wait with no signaller: hangs until the watchdog (2 s); we wait 1 ms.
  auto bytes = npu::isa::assemble("sem_wait dma_out sem=0 count=1\nend\n");
  ASSERT_TRUE(bytes) << bytes.error().message;
  auto run = npu::run_raw_job(*dev, *bytes, {},
                              {.skip_validation = true, .timeout = std::chrono::milliseconds(1)});
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_TRUE(run->timed_out);
  EXPECT_FALSE(run->ok());
  npu::JobReport report;
  report.timed_out = true;
  report.host_ns = run->host_ns;
  EXPECT_NE(npu::format_job_report(report, false).find("job pending"), std::string::npos);
}

}  // namespace
