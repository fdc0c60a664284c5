#include "actors/evaluator/worker_session.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "messages/codec.hpp"

namespace crucible::evaluator {
namespace {

std::string str(const flatbuffers::String* s) { return s ? std::string(s->data(), s->size()) : std::string(); }

// Reply.FIELD into `to`; corrupt when the vector is misaligned (messages::scalars_of).
status doubles(const flatbuffers::Vector<double>* v, const char* field, std::vector<double>& to) {
  auto copied = messages::scalars_of(v, std::string("worker reply: Reply.") + field);
  if (!copied) return copied.error();
  to = std::move(*copied);
  return status::success();
}

std::vector<std::string> strings(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  if (v)
    for (auto s : *v) out.push_back(str(s));
  return out;
}

result<worker_reply> copy_reply(const sbx::Reply& r) {
  worker_reply out;
  out.ok = r.ok();
  out.error_kind = r.error_kind();
  out.error = str(r.error());
  out.task_fault = r.task_fault();
  if (r.trials())
    for (auto t : *r.trials()) {
      trial_outcome o;
      o.seed = t->seed();
      o.structure_ok = t->structure_ok();
      o.structure_error = str(t->structure_error());
      o.nonfinite = t->nonfinite();
      o.max_abs_error = t->max_abs_error();
      o.max_tolerance_ratio = t->max_tolerance_ratio();
      o.ref_seconds = t->ref_seconds();
      o.cand_seconds = t->cand_seconds();
      o.state_changed = strings(t->state_changed());
      o.defence = str(t->defence());
      o.ref_digest = t->ref_digest();
      o.cand_digest = t->cand_digest();
      out.trials.push_back(std::move(o));
    }
  CRUCIBLE_TRY(doubles(r.ref_seconds(), "ref_seconds", out.ref_seconds));
  CRUCIBLE_TRY(doubles(r.cand_seconds(), "cand_seconds", out.cand_seconds));
  CRUCIBLE_TRY(doubles(r.ref_event_seconds(), "ref_event_seconds", out.ref_event_seconds));
  CRUCIBLE_TRY(doubles(r.cand_event_seconds(), "cand_event_seconds", out.cand_event_seconds));
  CRUCIBLE_TRY(doubles(r.ref_cpu_seconds(), "ref_cpu_seconds", out.ref_cpu_seconds));
  CRUCIBLE_TRY(doubles(r.cand_cpu_seconds(), "cand_cpu_seconds", out.cand_cpu_seconds));
  out.state_changed = strings(r.state_changed());
  out.info = strings(r.info());
  out.defence = str(r.defence());
  return out;
}

}  // namespace

result<worker_reply> decode_reply(std::span<const std::uint8_t> frame, std::uint64_t seq) {
  flatbuffers::Verifier verifier(frame.data(), frame.size());
  if (!sbx::VerifySandboxMessageBuffer(verifier))
    return make_error(errc::corrupt, "worker reply fails the FlatBuffers verifier");
  auto msg = sbx::GetSandboxMessage(frame.data());
  if (msg->seq() != seq || !msg->reply())
    return make_error(errc::corrupt, fmt::format("worker replied to request {} with seq {}", seq, msg->seq()));
  return copy_reply(*msg->reply());
}

worker_environment worker_environment::defaults() {
  worker_environment e;
  e.python = CRUCIBLE_EVALUATOR_PYTHON;
  e.worker_script = CRUCIBLE_EVALUATOR_WORKER;
  e.generated_python = CRUCIBLE_EVALUATOR_GENERATED_PYTHON;
  e.stream_fence = CRUCIBLE_EVALUATOR_STREAM_FENCE;
  return e;
}

result<worker_session> worker_session::start(const worker_start& how) {
  sandbox_spec spec;
  spec.program = how.env.python;
  spec.args = {"-B", "-s", how.env.worker_script.string()};
  const std::string scratch = how.scratch.string();
  const std::string threads = std::to_string(how.threads);
  spec.env = {
      "HOME=" + scratch,
      "TMPDIR=" + scratch,
      "PYTHONPATH=" + how.env.generated_python.string(),
      "CRUCIBLE_STREAM_FENCE=" + how.env.stream_fence.string(),
      "PYTHONDONTWRITEBYTECODE=1",
      "PYTHONNOUSERSITE=1",
      "PYTHONHASHSEED=0",
      "OMP_NUM_THREADS=" + threads,
      "MKL_NUM_THREADS=" + threads,
      "OPENBLAS_NUM_THREADS=" + threads,
      "CUDA_VISIBLE_DEVICES=" + how.cuda_visible_devices,
      "LANG=C.UTF-8",
      // Freed tensors stay in the heap instead of going back to the OS, so
      // that rounds do not pay page faults whose cost depends on what other
      // processes do with memory (the biggest source of CPU timing noise).
      "MALLOC_MMAP_THRESHOLD_=33554432",
      "MALLOC_TRIM_THRESHOLD_=1073741824",
      "MALLOC_TOP_PAD_=67108864",
  };
  for (const char* key : {"PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CXX", "CC"})
    if (const char* v = std::getenv(key)) spec.env.push_back(std::string(key) + "=" + v);
  if (!std::getenv("PATH")) spec.env.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
  spec.env.insert(spec.env.end(), how.extra_env.begin(), how.extra_env.end());
  spec.scratch = how.scratch;
  spec.writable = how.writable;
  spec.log = how.scratch / "worker.log";
  spec.limits = how.limits;
  auto p = sandbox_process::start(spec);
  if (!p) return p.error();
  return worker_session(std::move(p.value()));
}

template <class Build>
result<worker_reply> worker_session::call(sbx::Request kind, Build&& build,
                                          clock_type::time_point deadline) {
  flatbuffers::FlatBufferBuilder fbb(1024);
  const std::uint64_t seq = ++seq_;
  flatbuffers::Offset<void> req = build(fbb);
  sbx::SandboxMessageBuilder m(fbb);
  m.add_seq(seq);
  m.add_request_type(kind);
  m.add_request(req);
  fbb.Finish(m.Finish(), sbx::SandboxMessageIdentifier());
  CRUCIBLE_TRY(process_.send({fbb.GetBufferPointer(), fbb.GetSize()}));
  auto frame = process_.receive(deadline);
  if (!frame) return frame.error();
  auto reply = decode_reply(*frame, seq);
  if (!reply) process_.kill();
  return reply;
}

result<worker_reply> worker_session::load_task(const std::string& source, const std::string& module_name,
                                               std::uint64_t init_seed, const std::string& device,
                                               std::uint32_t threads,
                                               std::span<const std::uint64_t> probe_seeds,
                                               clock_type::time_point deadline) {
  const std::vector<std::uint64_t> probes(probe_seeds.begin(), probe_seeds.end());
  return call(sbx::Request::LoadTask, [&](flatbuffers::FlatBufferBuilder& b) {
    return sbx::CreateLoadTaskDirect(b, source.c_str(), module_name.c_str(), init_seed, device.c_str(),
                                     threads, &probes)
        .Union();
  }, deadline);
}

result<worker_reply> worker_session::load_candidate(const std::string& source, const std::string& module_name,
                                                    std::uint64_t init_seed, const std::string& extensions_dir,
                                                    clock_type::time_point deadline) {
  return call(sbx::Request::LoadCandidate, [&](flatbuffers::FlatBufferBuilder& b) {
    return sbx::CreateLoadCandidateDirect(b, source.c_str(), module_name.c_str(), init_seed,
                                          extensions_dir.c_str())
        .Union();
  }, deadline);
}

result<worker_reply> worker_session::compile(const std::string& source, const std::string& module_name,
                                             const std::string& extensions_dir, clock_type::time_point deadline,
                                             const std::string& task_source) {
  return call(sbx::Request::CompileCandidate, [&](flatbuffers::FlatBufferBuilder& b) {
    return sbx::CreateCompileCandidateDirect(b, source.c_str(), module_name.c_str(), extensions_dir.c_str(),
                                             task_source.empty() ? 0 : 1,
                                             task_source.empty() ? nullptr : task_source.c_str())
        .Union();
  }, deadline);
}

namespace {

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<sbx::DtypeTolerance>>> by_dtype(
    flatbuffers::FlatBufferBuilder& b, const tolerance_table& t) {
  std::vector<flatbuffers::Offset<sbx::DtypeTolerance>> v;
  for (const auto& [dtype, tol] : t.by_dtype)
    v.push_back(sbx::CreateDtypeTolerance(b, b.CreateString(dtype), tol.atol, tol.rtol));
  return b.CreateVector(v);
}

}  // namespace

result<worker_reply> worker_session::correctness(std::span<const std::uint64_t> seeds,
                                                 const tolerance_table& tolerances, clock_type::time_point deadline) {
  return call(sbx::Request::CorrectnessTrials, [&](flatbuffers::FlatBufferBuilder& b) {
    auto v = b.CreateVector(seeds.data(), seeds.size());
    auto d = by_dtype(b, tolerances);
    return sbx::CreateCorrectnessTrials(b, v, tolerances.fallback.atol, tolerances.fallback.rtol, d).Union();
  }, deadline);
}

result<worker_reply> worker_session::timed_rounds(std::span<const std::uint64_t> seeds,
                                                  const std::vector<bool>& candidate_first, bool process_cpu,
                                                  const spot_checks& checks, bool device_clock,
                                                  const std::vector<bool>& audit, clock_type::time_point deadline) {
  return call(sbx::Request::TimedRounds, [&](flatbuffers::FlatBufferBuilder& b) {
    auto s = b.CreateVector(seeds.data(), seeds.size());
    auto o = b.CreateVector(candidate_first);
    auto c = b.CreateVector(checks.check);
    auto d = by_dtype(b, checks.tolerances);
    auto a = b.CreateVector(audit);
    return sbx::CreateTimedRounds(b, s, o, process_cpu, c, checks.tolerances.fallback.atol,
                                  checks.tolerances.fallback.rtol, d, device_clock, a)
        .Union();
  }, deadline);
}

status worker_session::close() {
  auto r = call(sbx::Request::Shutdown, [](flatbuffers::FlatBufferBuilder& b) {
    return sbx::CreateShutdown(b).Union();
  }, clock_type::now() + std::chrono::seconds(5));
  process_.kill();
  if (!r) return r.error();
  if (!r->ok) return make_error(errc::corrupt, "worker refused to shut down: " + r->error);
  return status::success();
}

void worker_session::shutdown() { (void)close(); }

}  // namespace crucible::evaluator
