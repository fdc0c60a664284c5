// A small file system for tests of full disks: a size-limited tmpfs that the
// test mounts itself, with no root and no loop device. The test process
// enters a user and mount namespace of its own (as `unshare --user
// --map-root-user --mount` does) the first time it asks for one; the
// processes it starts afterwards see the same mounts.
//
// Who calls it: a test case, on its main thread, before it starts any thread
// (the kernel lets only a single-threaded process enter a user namespace;
// ctest runs each test case as its own process). Not thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace crucible::testing {

class small_fs {
 public:
  // Mounts a tmpfs of `bytes` at a fresh directory named after `name`.
  // nullptr when the kernel refuses (no user namespaces, or mounting is
  // not allowed in them); why() then says what it refused.
  static std::unique_ptr<small_fs> make(const std::string& name, std::size_t bytes);
  static const std::string& why();

  ~small_fs();  // unmounts
  small_fs(const small_fs&) = delete;
  small_fs& operator=(const small_fs&) = delete;

  const std::string& path() const { return path_; }
  // Fills what is left with a ballast file, to the last page: the next write
  // that needs a new page fails with ENOSPC.
  void fill();
  // Removes the ballast: the space is back.
  void release();
  // Free bytes now.
  std::size_t free_bytes() const;

 private:
  explicit small_fs(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace crucible::testing
