// Helpers of the tool tests (tests/tools): run a tool as a subprocess with its output
// captured, per-test work directories, file I/O. Header-only, for the tools_tests binary.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace npu::tools::testing {

namespace fs = std::filesystem;

struct Proc {
  int status = -1;
  std::string out, err;
};

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline fs::path work_dir(const std::string& name) {
  fs::path dir = fs::path(NPU_TEST_WORK_DIR) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs argv with stdout/stderr captured to files in `dir`.
inline Proc run(const std::vector<std::string>& argv, const fs::path& dir) {
  std::string cmd;
  for (const auto& a : argv) cmd += quote(a) + " ";
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  cmd += ">" + quote(out.string()) + " 2>" + quote(err.string());
  const int raw = std::system(cmd.c_str());
  Proc r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

inline size_t count_lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

inline void write_bytes(const fs::path& p, const std::vector<std::byte>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

inline std::vector<std::byte> read_bytes(const fs::path& p) {
  const std::string s = slurp(p);
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

}  // namespace npu::tools::testing
