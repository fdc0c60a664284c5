// Removes a folder and everything under it (or a file), as
// std::filesystem::remove_all would, through nftw. Every module calls this
// instead of remove_all: PyTorch's wheels (2.11 at least) export their own
// broken copy of remove_all from libtorch.so, and the dynamic linker binds the
// calls of any binary linked against it (the crucible binary, the learner's
// and the policy's tests) to that copy, which jumps to a null pointer
// (docs/gpu.md). A missing path is no error; what cannot be removed is left.
// Callable from any thread. Torch-free, header-only.
#pragma once

#include <ftw.h>

#include <cstdio>
#include <filesystem>

namespace crucible {

inline void remove_tree(const std::filesystem::path& p) {
  ::nftw(
      p.c_str(), [](const char* file, const struct stat*, int, struct FTW*) { return std::remove(file); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

}  // namespace crucible
