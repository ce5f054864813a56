// python/src/session.h: the pool of Models behind npu.Session, run from several threads at
// once on small packages built in the test (tests/runtime/test_packages.h) — every result
// checked against a run alone, the pool's size bounded, close() while runs are in flight, and
// the errors. Plain C++, so the TSan stage (whose build has no compiler for the pytest suite's
// packages) checks the pool's locking too.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "session.h"
#include "test_packages.h"

namespace {

using npu::format::ArrayView;
using npu::python::Session;
using npu::python::SessionOptions;
using namespace npu::runtime_test;

std::shared_ptr<const Package> batch_package() {
  return std::make_shared<const Package>(
      relu_softmax_package(8, "y", "Softmax", {Dim::named("N"), Dim::fixed(8)}));
}

std::vector<float> input_row(int k) {
  std::vector<float> x(8);
  for (int i = 0; i < 8; ++i) x[i] = static_cast<float>((k * 7 + i * 3) % 11 - 5) * 0.4f;
  return x;
}

std::vector<float> relu_of(std::vector<float> v) {
  for (float& x : v) x = std::max(x, 0.0f);
  return v;
}

bool near(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::abs(a[i] - b[i]) > 1e-6f) return false;
  }
  return true;
}

std::vector<float> run_row(Session& s, const std::vector<float>& x) {
  const ArrayView view(DType::kFloat32, {1, 8}, std::as_bytes(std::span(x)));
  auto out = s.run({{"x", view}}, {});
  EXPECT_TRUE(out) << out.error().message;
  if (!out) return {};
  return out->at("y").values<float>();
}

/// A session of batch_package() on "emu:" with up to `max_instances` Models, or null.
std::unique_ptr<Session> open_session(const std::string& name, size_t max_instances) {
  SessionOptions options;
  options.max_instances = max_instances;
  auto s = Session::open(batch_package(), name, "emu:", std::nullopt, options);
  EXPECT_TRUE(s) << s.error().message;
  return s ? std::move(*s) : nullptr;
}

TEST(PythonSession, ThreadsShareOneSession) {
  auto s = open_session("t.npub", 3);
  ASSERT_TRUE(s);
  Session& session = *s;
  EXPECT_EQ(session.instances(), 1u);
  ASSERT_EQ(session.inputs().size(), 1u);
  EXPECT_EQ(session.inputs()[0].name, "x");
  std::vector<std::vector<float>> want;
  for (int k = 0; k < 8; ++k) want.push_back(softmax(relu_of(input_row(k))));

  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 20; ++r) {
        const int k = (t * 3 + r) % 8;
        if (!near(run_row(session, input_row(k)), want[k])) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(session.instances(), 1u);
  EXPECT_LE(session.instances(), 3u);
  auto stats = session.last_stats();
  ASSERT_TRUE(stats);
  EXPECT_GT(stats->device_cycles, 0u);
  EXPECT_TRUE(stats->has_profile);
}

TEST(PythonSession, CloseWhileThreadsRun) {
  auto s = open_session("c.npub", 2);
  ASSERT_TRUE(s);
  Session& session = *s;
  std::atomic<int> ok{0}, closed{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      const std::vector<float> x = input_row(1);
      const ArrayView view(DType::kFloat32, {1, 8}, std::as_bytes(std::span(x)));
      for (int r = 0; r < 200; ++r) {
        auto out = session.run({{"x", view}}, {});
        if (out) {
          ++ok;
        } else if (out.error().message == "c.npub: the session is closed") {
          ++closed;
          return;
        } else {
          ++other;
          return;
        }
      }
    });
  }
  while (ok.load() < 5) std::this_thread::yield();
  session.close();
  for (auto& t : threads) t.join();
  EXPECT_EQ(other.load(), 0);
  EXPECT_TRUE(session.closed());
  EXPECT_EQ(session.instances(), 0u);
  const std::vector<float> x = input_row(2);
  auto after =
      session.run({{"x", ArrayView(DType::kFloat32, {1, 8}, std::as_bytes(std::span(x)))}}, {});
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().message, "c.npub: the session is closed");
  session.close();  // twice is fine
}

TEST(PythonSession, Errors) {
  SessionOptions none;
  none.max_instances = 0;
  auto zero = Session::open(batch_package(), "z.npub", "emu:", std::nullopt, none);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "z.npub: max_parallel must be at least 1");
  auto bad_device = Session::open(batch_package(), "d.npub", "nosuch:", std::nullopt, {});
  ASSERT_FALSE(bad_device);
  auto s = open_session("e.npub", 1);
  ASSERT_TRUE(s);
  const std::vector<float> x = input_row(0);
  auto unknown =
      s->run({{"z", ArrayView(DType::kFloat32, {1, 8}, std::as_bytes(std::span(x)))}}, {});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown input 'z'"), std::string::npos);
  EXPECT_TRUE(near(run_row(*s, x), softmax(relu_of(x))));  // still usable
}

}  // namespace
