// One sandbox worker driven through messages/sandbox.fbs (see that file for
// what each request does). The evaluator owns one session per evaluation
// attempt and the compile cache one per compile; a session is never reused
// after a failure (the caller starts a fresh one). Not thread-safe.
//
// Errors of every call: timeout (deadline passed; the process group was
// killed), unavailable (the worker died; exit() says how), corrupt (a reply
// that fails the FlatBuffers verifier or answers another request).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "actors/evaluator/protocol.hpp"
#include "actors/evaluator/sandbox.hpp"
#include "messages/sandbox_generated.h"
#include "runtime/base/result.hpp"

namespace crucible::evaluator {

namespace sbx = crucible::sandbox;
using clock_type = std::chrono::steady_clock;

// Where the worker program and its generated Python live, and how to start it.
struct worker_environment {
  // Interpreter with PyTorch. Default: CMake's CRUCIBLE_PYTHON (/usr/bin/python3).
  std::filesystem::path python;
  // actors/evaluator/worker/sandbox_worker.py. Default: from the source tree.
  std::filesystem::path worker_script;
  // flatc --python output (build/generated/python). Default: from the build tree.
  std::filesystem::path generated_python;
  // The stream fence's native loop (worker/stream_fence.cpp), handed to the
  // worker as CRUCIBLE_STREAM_FENCE. Default: from the build tree.
  std::filesystem::path stream_fence;
  static worker_environment defaults();
};

struct trial_outcome {
  std::uint64_t seed = 0;
  bool structure_ok = false;
  std::string structure_error;
  bool nonfinite = false;
  double max_abs_error = 0;
  double max_tolerance_ratio = 0;
  double ref_seconds = 0;
  double cand_seconds = 0;
  std::vector<std::string> state_changed;
  std::string defence;          // the defence behind structure_error, when the worker named one
  std::uint64_t ref_digest = 0, cand_digest = 0;  // output value digests (constant-output check)
};

// Spot checks of one TimedRounds request: check[i] compares round i's
// candidate output with the reference's (messages/sandbox.fbs).
struct spot_checks {
  std::vector<bool> check;
  tolerance_table tolerances;
};

// A worker's reply, copied out of the verified buffer.
struct worker_reply {
  bool ok = false;
  sbx::ErrorKind error_kind = sbx::ErrorKind::None;
  std::string error;
  bool task_fault = false;
  std::vector<trial_outcome> trials;
  std::vector<double> ref_seconds, cand_seconds, ref_event_seconds, cand_event_seconds;
  std::vector<double> ref_cpu_seconds, cand_cpu_seconds;
  std::vector<std::string> state_changed, info;
  std::string defence;          // with error_kind Hack: the defence that fired
};

// Decodes the frame a worker wrote back for request `seq` (sandbox.fbs): the
// FlatBuffers verifier, then the copy into a worker_reply. Pure; the session
// calls it on every reply, and kills the worker on an error. Errors: corrupt
// when the frame fails the verifier, holds no reply, answers another request
// or holds a vector of doubles off its 8-byte boundary.
result<worker_reply> decode_reply(std::span<const std::uint8_t> frame, std::uint64_t seq);

struct worker_start {
  worker_environment env;
  std::filesystem::path scratch;                 // must exist; cwd and HOME
  std::vector<std::filesystem::path> writable;   // more writable directories
  sandbox_limits limits;
  std::string cuda_visible_devices;              // "" hides every GPU
  std::uint32_t threads = 1;
  std::vector<std::string> extra_env;            // "KEY=value", after the defaults
};

class worker_session {
 public:
  // Starts the worker process. Errors: io.
  static result<worker_session> start(const worker_start& how);

  result<worker_reply> load_task(const std::string& source, const std::string& module_name,
                                 std::uint64_t init_seed, const std::string& device,
                                 std::uint32_t threads, std::span<const std::uint64_t> probe_seeds,
                                 clock_type::time_point deadline);
  result<worker_reply> load_candidate(const std::string& source, const std::string& module_name,
                                      std::uint64_t init_seed, const std::string& extensions_dir,
                                      clock_type::time_point deadline);
  // Stage 0 (task_source empty) or 1 of CompileCandidate (messages/sandbox.fbs).
  result<worker_reply> compile(const std::string& source, const std::string& module_name,
                               const std::string& extensions_dir, clock_type::time_point deadline,
                               const std::string& task_source = {});
  result<worker_reply> correctness(std::span<const std::uint64_t> seeds, const tolerance_table& tolerances,
                                   clock_type::time_point deadline);
  // With device_clock (CUDA), rounds whose audit flag is set are timed
  // without the GPU sleep (messages/sandbox.fbs, TimedRounds).
  result<worker_reply> timed_rounds(std::span<const std::uint64_t> seeds,
                                    const std::vector<bool>& candidate_first, bool process_cpu,
                                    const spot_checks& checks, bool device_clock, const std::vector<bool>& audit,
                                    clock_type::time_point deadline);
  // Asks the worker to exit, then kills the group whatever it did.
  void shutdown();
  // The same, but an error unless the worker acknowledged in order: a worker
  // that died, or answered with a reply that belongs to another request
  // (something else wrote to its pipe), fails here. Errors as call().
  status close();

  sandbox_process& process() { return process_; }
  const sandbox_process& process() const { return process_; }

 private:
  explicit worker_session(sandbox_process p) : process_(std::move(p)) {}
  template <class Build>
  result<worker_reply> call(sbx::Request kind, Build&& build, clock_type::time_point deadline);

  sandbox_process process_;
  std::uint64_t seq_ = 0;
};

}  // namespace crucible::evaluator
