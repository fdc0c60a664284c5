// Helpers shared by the policy tests: a scratch folder removed at the end,
// and whole-file read/write.
#pragma once

#include <ftw.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace crucible::policy::testing {

class scratch_dir {
 public:
  scratch_dir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("crucible-policy-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  // Removed with nftw, not std::filesystem::remove_all: PyTorch's wheels
  // (2.11 at least) export their own copy of remove_all from libtorch.so, which
  // the dynamic linker binds a test's call to, and that copy jumps to a null
  // pointer (SIGSEGV in every test that used a scratch folder on the GPU machine).
  ~scratch_dir() {
    ::nftw(
        path_.c_str(), [](const char* file, const struct stat*, int, struct FTW*) { return std::remove(file); }, 16,
        FTW_DEPTH | FTW_PHYS);
  }
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
