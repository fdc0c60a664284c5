// Compile once: candidates that build inline extensions (torch.utils.
// cpp_extension.load_inline / load) are compiled in a separate sandboxed
// process with no GPU (the CPU pool), before any timing, into a cache entry
// keyed by sha256(source, toolchain, architecture): the candidate is
// imported, then (with its task) constructed and called once on meta
// tensors, so that builds made at import, in __init__ or on a first forward
// all land in the entry, each keyed by its own arguments
// (worker/extensions.py). The timing worker imports them from there; a
// build the pool could not reach is made by the timing worker itself, into
// the same entry (outcome_of's extension counts say which happened).
//
// Shared by every evaluator in a process (thread-safe: a counting semaphore
// bounds concurrent compiles, the "CPU pool"; a mutex guards the toolchain
// id; an flock per key serializes compiles of one key across processes).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <semaphore>
#include <string>
#include <string_view>
#include <vector>

#include "actors/evaluator/sandbox.hpp"
#include "actors/evaluator/worker_session.hpp"
#include "runtime/base/result.hpp"

namespace crucible::evaluator {

struct compile_cache_options {
  // Cache root. Default: $XDG_CACHE_HOME/crucible/kernels, else
  // $HOME/.cache/crucible/kernels, else /tmp/crucible-kernels.
  std::filesystem::path root = default_root();
  // Compiles at once (the CPU pool), each running two compiler jobs.
  // Default: half the cores less the measuring one and the evaluator's,
  // at least 1 (1 on 2 cores, 7 on a 16-core GPU node: CUDA-L1's inline
  // kernels take 40-90 s of nvcc each, and one at a time left the GPU
  // waiting behind them).
  unsigned parallelism = default_parallelism();
  // Wall-clock limit of one compile. Default 600 s.
  double timeout_s = 600;
  // Limits of the compile process. Default: sandbox defaults with 16 GiB of
  // address space (cc1plus on torch headers) and every core.
  sandbox_limits limits = compile_limits();
  // Target architecture in the key: "cpu-<machine>" or "sm_<cc>". Default: the host CPU.
  std::string arch = host_arch();
  // TORCH_CUDA_ARCH_LIST for CUDA sources (the compile process sees no GPU,
  // so torch cannot ask one). Part of the key. Default: $TORCH_CUDA_ARCH_LIST,
  // else "9.0" (H200).
  std::string cuda_arch_list = default_cuda_arch_list();

  static std::filesystem::path default_root();
  static unsigned default_parallelism();
  static sandbox_limits compile_limits();
  static std::string host_arch();
  static std::string default_cuda_arch_list();
};

// What prepare() found or did.
struct compile_outcome {
  bool needed = false;       // the source builds an extension at all
  bool hit = false;          // served from the cache (a success or a cached failure)
  bool ok = true;            // built (or nothing to build)
  bool timed_out = false;    // the compile process missed its deadline
  bool crashed = false;      // the compile process died
  sbx::ErrorKind error_kind = sbx::ErrorKind::None;
  std::string error;         // compiler output tail on failure
  std::string key;           // sha256 hex
  std::filesystem::path extensions_dir;  // TORCH_EXTENSIONS_DIR for the timing worker
};

class compile_cache {
 public:
  explicit compile_cache(compile_cache_options options = {});

  // True when the source may build an inline extension.
  static bool needs_compile(std::string_view source);

  // sha256 over source, toolchain id and arch, as 64 hex digits.
  std::string key(std::string_view source);

  // Compiles the candidate if needed and not cached. scratch_root holds the
  // compile process's scratch directory. Errors: io (cache directory or the
  // process could not be made); a failed compile is an outcome, not an error.
  // task_source: the candidate's task, for stage 1 (may be empty). cores:
  // where the compile process runs (cpu_stage: beside the measuring cores);
  // empty keeps the options' limits.
  result<compile_outcome> prepare(const std::string& source, const std::string& task_source,
                                  const worker_environment& env, const std::filesystem::path& scratch_root,
                                  const std::vector<int>& cores = {});

  // Environment of every worker that builds or imports extensions (the
  // compile pool's and the timing worker's), so that both compute the same
  // build keys: TORCH_CUDA_ARCH_LIST and CRUCIBLE_TOOLCHAIN.
  std::vector<std::string> worker_env();

  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }
  const compile_cache_options& options() const { return options_; }

 private:
  std::string toolchain();

  compile_cache_options options_;
  std::counting_semaphore<64> pool_;
  std::mutex mutex_;
  std::string toolchain_;  // guarded by mutex_
  std::atomic<std::uint64_t> hits_{0}, misses_{0};
};

// sha256 of bytes as 64 hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace crucible::evaluator
