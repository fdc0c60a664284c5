// Removes a folder and everything under it (or a file), as
// std::filesystem::remove_all would, through nftw: PyTorch's wheels (2.11 at
// least) export their own broken copy of remove_all from libtorch.so, which
// the dynamic linker binds the learner's calls to on the GPU machines
// (docs/gpu.md). A missing path is no error. Torch-free.
#pragma once

#include <ftw.h>

#include <cstdio>
#include <filesystem>

namespace crucible::learner {

inline void remove_tree(const std::filesystem::path& p) {
  ::nftw(
      p.c_str(), [](const char* file, const struct stat*, int, struct FTW*) { return std::remove(file); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

}  // namespace crucible::learner
