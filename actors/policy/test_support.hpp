// Helpers shared by the policy tests: a scratch folder removed at the end,
// and whole-file read/write.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "runtime/base/remove_tree.hpp"

namespace crucible::policy::testing {

class scratch_dir {
 public:
  scratch_dir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("crucible-policy-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  // Not std::filesystem::remove_all (runtime/base/remove_tree.hpp says why:
  // SIGSEGV in every test that used a scratch folder on the GPU machine).
  ~scratch_dir() { remove_tree(path_); }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace crucible::policy::testing
