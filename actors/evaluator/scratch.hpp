// A scratch directory that a sandbox worker runs in: created fresh under a
// root, removed with everything in it when the owner lets go. One owner.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <stdlib.h>

#include "runtime/base/remove_tree.hpp"
#include "runtime/base/result.hpp"

namespace crucible::evaluator {

class scratch_dir {
 public:
  // Makes root/prefix-XXXXXX. Errors: io.
  static result<scratch_dir> create(const std::filesystem::path& root, const std::string& prefix) {
    std::error_code ec;
    std::filesystem::create_directories(root, ec);
    std::string templ = (root / (prefix + "-XXXXXX")).string();
    if (!::mkdtemp(templ.data()))
      return make_error(errc::io, fmt::format("cannot create a scratch directory under {}", root.string()));
    return scratch_dir(templ);
  }
  scratch_dir(scratch_dir&& o) noexcept : path_(std::move(o.path_)), keep_(o.keep_) { o.path_.clear(); }
  scratch_dir& operator=(scratch_dir&&) = delete;
  scratch_dir(const scratch_dir&) = delete;
  // remove_tree, not std::filesystem::remove_all: the crucible binary links
  // LibTorch too (runtime/base/remove_tree.hpp).
  ~scratch_dir() {
    if (!path_.empty() && !keep_) remove_tree(path_);
  }
  const std::filesystem::path& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  explicit scratch_dir(std::filesystem::path p) : path_(std::move(p)) {}
  std::filesystem::path path_;
  bool keep_ = false;
};

}  // namespace crucible::evaluator
