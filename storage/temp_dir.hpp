// A directory under $TMPDIR (or /tmp) removed with everything in it when the
// object goes. For tests and benchmarks that need a real RocksDB directory.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include "runtime/base/remove_tree.hpp"
#include "runtime/base/result.hpp"

namespace crucible::storage {

class temp_dir {
 public:
  explicit temp_dir(const std::string& stem = "crucible") {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/" + stem + "-XXXXXX";
    CRUCIBLE_CHECK(::mkdtemp(pattern.data()) != nullptr, "mkdtemp failed");
    path_ = pattern;
  }
  ~temp_dir() { remove_tree(path_); }  // runtime/base/remove_tree.hpp says why not remove_all
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace crucible::storage
