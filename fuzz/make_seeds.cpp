// Writes the generated seeds of fuzz/corpus/NAME/ with the project's own
// encoders: valid messages of every kind each fuzzer feeds, and a few
// near-valid ones (truncated, a byte flipped, the wrong kind). The hand-written
// seeds (TOML, JSON Lines, judge replies, config.json) are files in the
// corpus folders already. Usage: make_seeds FUZZ_DIR (tools/fuzz.sh --seeds).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "actors/detector/detector_wire.hpp"
#include "actors/exemplar/exemplar_wire.hpp"
#include "actors/learner/learner_wire.hpp"
#include "actors/learner/publication.hpp"
#include "actors/policy/checkpoint_weights.hpp"
#include "actors/policy/tokenizer_test_support.hpp"
#include "actors/referee/referee_wire.hpp"
#include "actors/rollout/rollout_wire.hpp"
#include "fuzz/fuzz_support.hpp"
#include "messages/codec.hpp"
#include "messages/sandbox_generated.h"
#include "runtime/bus/batch.hpp"

namespace {

using namespace crucible;
namespace m = crucible::msg;
namespace fs = std::filesystem;
using bytes = std::vector<std::uint8_t>;

fs::path root;

void write(const std::string& fuzzer, const std::string& name, const bytes& b) {
  fs::create_directories(root / "corpus" / fuzzer);
  std::ofstream out(root / "corpus" / fuzzer / name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}
void write(const std::string& fuzzer, const std::string& name, const std::string& s) {
  write(fuzzer, name, bytes(s.begin(), s.end()));
}

bytes truncated(bytes b) {
  b.resize(b.size() / 2);
  return b;
}
bytes flipped(bytes b, std::size_t at) {
  if (!b.empty()) b[at % b.size()] ^= 0x5a;
  return b;
}
bytes with_kind(std::uint8_t kind, const std::vector<bytes>& parts) {
  bytes out{kind};
  auto joined = fuzz::join_parts(parts);
  out.insert(out.end(), joined.begin(), joined.end());
  return out;
}

// --- bus messages (messages/bus.fbs) ---

bytes strings_envelope_register(const std::string& name, m::Role role, std::vector<std::string> kinds,
                                std::vector<std::string> held = {}) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  std::vector<flatbuffers::Offset<flatbuffers::String>> k, h;
  for (auto& s : kinds) k.push_back(fbb.CreateString(s));
  for (auto& s : held) h.push_back(fbb.CreateString(s));
  auto kv = fbb.CreateVector(k);
  auto hv = fbb.CreateVector(h);
  auto r = m::CreateRegister(fbb, role, fbb.CreateString(name), fbb.CreateString("node"), 1, kv, 2, hv, 0);
  return w.finish(r, name, name);
}
bytes credit(const std::string& name, std::uint32_t free, std::uint64_t last_seq) {
  messages::envelope_writer w;
  return w.finish(m::CreateCredit(w.fbb(), free, last_seq), name);
}
bytes heartbeat(const std::string& name, std::uint64_t seq, std::vector<std::string> held) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  std::vector<flatbuffers::Offset<flatbuffers::String>> h;
  for (auto& s : held) h.push_back(fbb.CreateString(s));
  return w.finish(m::CreateHeartbeat(fbb, seq, 1, seq, fbb.CreateVector(h)), name);
}
bytes submit(const std::string& name, const std::string& id, const std::string& kind, const bytes& payload) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  return w.finish(m::CreateJobSubmit(fbb, fbb.CreateString(id), fbb.CreateString(kind), fbb.CreateVector(payload)),
                  name, id);
}
bytes job(const std::string& id, const std::string& kind, std::uint64_t seq, const bytes& payload) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  return w.finish(m::CreateJob(fbb, fbb.CreateString(id), fbb.CreateString(kind), fbb.CreateVector(payload), seq, 1),
                  "hub", id);
}
bytes job_result(const std::string& sender, const std::string& id, m::JobStatus st, const bytes& payload) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  auto r = m::CreateJobResult(fbb, fbb.CreateString(id), st, fbb.CreateVector(payload),
                              fbb.CreateString(st == m::JobStatus::Ok ? "" : "it failed"), fbb.CreateString("w1"), 1, 1, 1);
  return w.finish(r, sender, id);
}
bytes result_ack(const std::string& sender, const std::string& id) {
  messages::envelope_writer w;
  return w.finish(m::CreateJobResultAck(w.fbb(), w.fbb().CreateString(id)), sender, id);
}
bytes accepted(const std::string& id) {
  messages::envelope_writer w;
  return w.finish(m::CreateJobAccepted(w.fbb(), w.fbb().CreateString(id), false), "hub", id);
}
bytes registered() {
  messages::envelope_writer w;
  return w.finish(m::CreateRegistered(w.fbb(), 7, 500, 3000), "hub");
}
bytes reject(m::RejectCode code) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  return w.finish(m::CreateReject(fbb, code, fbb.CreateString("j1"), fbb.CreateString("no")), "hub");
}
bytes peer_event(const std::string& name, m::Role role, std::vector<std::string> kinds, bool required = false) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  std::vector<flatbuffers::Offset<flatbuffers::String>> k;
  for (auto& s : kinds) k.push_back(fbb.CreateString(s));
  auto kv = fbb.CreateVector(k);
  return w.finish(m::CreatePeerEvent(fbb, fbb.CreateString(name), role, fbb.CreateString("node"), true, kv, required, 0),
                  "hub", name);
}
bytes metrics() {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  std::vector<flatbuffers::Offset<m::KeyValue>> v{m::CreateKeyValue(fbb, fbb.CreateString("rate"), 2.5)};
  return w.finish(m::CreateMetrics(fbb, m::Role::Evaluator, fbb.CreateString("ev1"), fbb.CreateVector(v)), "ev1");
}

// --- domain messages (messages/domain.fbs) ---

bytes candidate(const std::string& id) { return referee::candidate_envelope(id, "t", "class ModelNew: pass", "client"); }
bytes measurement(const std::string& id, double speedup, m::EvalStatus st = m::EvalStatus::Ok, bool verify = false,
                  const std::string& evaluator = "ev1") {
  return referee::simple_measurement(id, "t", st, speedup, evaluator, "cpu", verify);
}
bytes verdict(const std::string& id, detector::verdict_kind k) {
  detector::verdict v;
  v.candidate_id = id;
  v.detector = "static";
  v.kind = k;
  v.reason = "seed";
  v.required = true;
  v.confidence = 0.9;
  return detector::encode_verdict(v, "static");
}
bytes settlement(const std::string& id, m::SettlementStatus st, double reward) {
  auto c = candidate(id);
  referee::settlement_fields s;
  s.status = st;
  s.reward = reward;
  s.speedup_raw = reward;
  s.reason = "seed";
  return referee::settlement_envelope(*referee::payload_of<m::Candidate>(c), s, "referee");
}
bytes detect_request(const std::string& id, bool with_verification) {
  auto c = candidate(id);
  auto meas = measurement(id, 4.0);
  auto ver = measurement(id, 3.9, m::EvalStatus::Ok, true, "ev2");
  return referee::detect_request_envelope(*referee::payload_of<m::Candidate>(c), *referee::payload_of<m::Measurement>(meas),
                                          with_verification ? referee::payload_of<m::Measurement>(ver) : nullptr,
                                          "referee");
}
bytes exemplar_answer(const std::string& error) {
  exemplar::exemplar_answer a;
  a.task_id = "t";
  a.error = error;
  if (error.empty()) a.exemplars = {{"t", "x1", "code one", 1.5, 15, 1.52}, {"t", "x2", "code two", 0.8, 8, 0.81}};
  messages::envelope_writer w;
  return w.finish(exemplar::build_answer(w.fbb(), a), "exemplars", "t");
}
bytes exemplar_buckets(const std::string& task) {
  exemplar::bucket_report r{task, {{12, {1.2, 1.3}, 2, 2'500'000}, {20, {2.0, 2.1}, 1, 2'050'000}}, {0.3, 0.7},
                            exemplar::selector_kind::bucket, 1.0, exemplar::bucket_scale::linear, 0.1};
  messages::envelope_writer w;
  return w.finish(exemplar::build_buckets(w.fbb(), r), "exemplars", task);
}
bytes rollout_group(bool with_versions) {
  learner::rollout_group g;
  g.group_id = "g1";
  g.task_id = "t";
  g.policy_version = 3;
  for (int i = 0; i < 2; ++i) {
    learner::rollout_sample s;
    s.prompt_ids = {1, 2, 3};
    s.completion_ids = {4, 5};
    s.behaviour_logprobs = {-0.5f, -1.25f};
    if (with_versions) s.token_versions = {3, 4};
    s.reward = i;
    g.samples.push_back(s);
  }
  messages::envelope_writer w;
  return w.finish(learner::build_group(w.fbb(), g, "rollout-1"), "rollout-1", "g1");
}
bytes publication(std::uint32_t chunks, std::uint64_t total) {
  learner::publication p;
  p.version = 4;
  p.total_bytes = total;
  p.chunks = chunks;
  p.sha256 = std::string(64, 'a');
  messages::envelope_writer w;
  return w.finish(learner::build_publication(w.fbb(), p), "learner", "4");
}
bytes chunk(std::uint32_t index, const bytes& data) {
  messages::envelope_writer w;
  return w.finish(learner::build_chunk(w.fbb(), 4, index, data), "learner", "4");
}

void envelope_seeds() {
  std::vector<std::pair<std::string, bytes>> all{
      {"register", strings_envelope_register("w1", m::Role::Worker, {"measure"}, {"j0"})},
      {"credit", credit("w1", 2, 5)},
      {"heartbeat", heartbeat("w1", 3, {"j1"})},
      {"submit", submit("c", "j1", "measure", candidate("c1"))},
      {"job", job("j1", "measure", 1, candidate("c1"))},
      {"job_result", job_result("w1", "j1", m::JobStatus::Ok, measurement("c1", 1.2))},
      {"result_ack", result_ack("c", "j1")},
      {"reject", reject(m::RejectCode::UnknownPeer)},
      {"peer_event", peer_event("ev1", m::Role::Evaluator, {"measure"})},
      {"metrics", metrics()},
      {"candidate", candidate("c1")},
      {"measurement", measurement("c1", 1.7)},
      {"measurement_failed", measurement("c1", 0, m::EvalStatus::CompileError)},
      {"verdict", verdict("c1", detector::verdict_kind::hack)},
      {"settlement", settlement("c1", m::SettlementStatus::Success, 1.5)},
      {"settlement_hack", settlement("c1", m::SettlementStatus::Hack, 0)},
      {"detect_request", detect_request("c1", false)},
      {"detect_request_verified", detect_request("c1", true)},
      {"exemplar_query", rollout::exemplar_query_envelope("t", 2, 1.0, 9, "rollout-1")},
      {"exemplar_answer", exemplar_answer("")},
      {"exemplar_answer_error", exemplar_answer("store down")},
      {"exemplar_buckets", exemplar_buckets("t")},
      {"exemplar_buckets_not_utf8", exemplar_buckets("t\xff\xfe")},
      {"rollout_group", rollout_group(false)},
      {"rollout_group_versions", rollout_group(true)},
      {"publication", publication(2, 10)},
      {"chunk", chunk(0, bytes(5, 7))},
  };
  for (auto& [name, b] : all) write("envelope", name, b);
  write("envelope", "near_truncated", truncated(measurement("c1", 1.7)));
  write("envelope", "near_flipped", flipped(rollout_group(true), 40));
}

void bus_seeds() {
  const std::string peer = "fuzz-peer";  // the raw dealer's routing id in bus_frame.fuzz.cpp
  auto reg_worker = strings_envelope_register(peer, m::Role::Worker, {"*"});
  auto reg_client = strings_envelope_register(peer, m::Role::Client, {});
  auto batch = [](std::vector<bytes> msgs) {
    std::vector<std::span<const std::uint8_t>> v(msgs.begin(), msgs.end());
    return bus::join_batch(v);
  };
  write("bus_frame", "hub_register", with_kind(0, {reg_worker}));
  write("bus_frame", "hub_worker_batch",
        with_kind(0, {batch({reg_worker, credit(peer, 2, 0), heartbeat(peer, 1, {"j9"}),
                             job_result(peer, "j9", m::JobStatus::Ok, {1})})}));
  write("bus_frame", "hub_client_batch",
        with_kind(0, {batch({reg_client, submit(peer, "j1", "echo", {1, 2}), submit(peer, "j1", "echo", {1, 2}),
                             result_ack(peer, "j1")})}));
  write("bus_frame", "hub_submit_unregistered", with_kind(0, {submit(peer, "j1", "echo", {1})}));
  write("bus_frame", "hub_wrong_kind", with_kind(0, {candidate("c1")}));
  write("bus_frame", "hub_three_parts", with_kind(0, {reg_worker, {1}, {2}}));
  write("bus_frame", "hub_truncated_batch", with_kind(0, {truncated(batch({reg_worker, credit(peer, 1, 0)}))}));
  write("bus_frame", "hub_event_settlement", with_kind(1, {bytes{'S', 'e', 't', 't', 'l', 'e', 'm', 'e', 'n', 't'},
                                                           settlement("c1", m::SettlementStatus::Success, 1.5)}));
  write("bus_frame", "hub_event_wrong_topic", with_kind(1, {bytes{'M', 'e', 't', 'r', 'i', 'c', 's'}, settlement("c1", m::SettlementStatus::Failure, 0)}));
  write("bus_frame", "hub_event_one_part", with_kind(1, {metrics()}));
  write("bus_frame", "peer_registered", with_kind(2, {registered()}));
  write("bus_frame", "peer_jobs_batch",
        with_kind(2, {batch({registered(), job("j2", "echo", 1, {1}), job("j2", "echo", 1, {1}),
                             job("j3", "echo", 2, {2}), job("j4", "echo", 3, {3}), result_ack("hub", "j2")})}));
  write("bus_frame", "peer_client_batch",
        with_kind(2, {batch({registered(), accepted("j1"), job_result("hub", "j1", m::JobStatus::Ok, {9}),
                             job_result("hub", "j1", m::JobStatus::Failed, {})})}));
  write("bus_frame", "peer_reject", with_kind(2, {reject(m::RejectCode::UnknownPeer)}));
  write("bus_frame", "peer_reject_overloaded", with_kind(2, {reject(m::RejectCode::Overloaded)}));
  write("bus_frame", "peer_two_parts", with_kind(2, {registered(), {0}}));
  write("bus_frame", "peer_event", with_kind(3, {bytes{'P', 'e', 'e', 'r', 'E', 'v', 'e', 'n', 't'},
                                                 peer_event("ev1", m::Role::Evaluator, {"measure"})}));
}

void referee_seeds() {
  auto registry = peer_event("ev3", m::Role::Evaluator, {"measure", "verify:cpu"});
  // c1 measured 1.5: clean verdict, settles.
  write("referee", "plain", fuzz::join_parts({candidate("c2"), registry, measurement("c1", 1.5), measurement("c2", 1.2),
                                              verdict("c1", detector::verdict_kind::clean), verdict("c2", detector::verdict_kind::clean)}));
  // c1 measured 5.0: a verification on the second evaluator, then the detector.
  write("referee", "verified", fuzz::join_parts({candidate("c2"), registry, measurement("c1", 5.0),
                                                 measurement("c1", 4.9, m::EvalStatus::Ok, true, "ev2"),
                                                 verdict("c1", detector::verdict_kind::clean)}));
  write("referee", "disagree", fuzz::join_parts({candidate("c2"), registry, measurement("c1", 5.0),
                                                 measurement("c1", 1.0, m::EvalStatus::Ok, true, "ev2"),
                                                 verdict("c1", detector::verdict_kind::unsure)}));
  write("referee", "hack", fuzz::join_parts({candidate("c2"), registry, measurement("c1", 2.0),
                                             verdict("c1", detector::verdict_kind::hack)}));
  write("referee", "failed", fuzz::join_parts({candidate("c2"), registry, measurement("c1", 0, m::EvalStatus::Timeout)}));
  write("referee", "wrong_kinds", fuzz::join_parts({measurement("c2", 1), candidate("c3"), verdict("c1", detector::verdict_kind::clean),
                                                    measurement("c1", 1.1)}));
}

bytes sandbox_reply(std::uint64_t seq, bool ok, sandbox::ErrorKind kind, int trials, int rounds) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<sandbox::TrialOutcome>> t;
  for (int i = 0; i < trials; ++i) {
    std::vector<flatbuffers::Offset<flatbuffers::String>> changed{fbb.CreateString("threads")};
    t.push_back(sandbox::CreateTrialOutcome(fbb, 100 + i, i % 2 == 0, fbb.CreateString(i % 2 ? "shape differs" : ""),
                                            false, 1e-6, 0.3, 0.01, 0.02, fbb.CreateVector(changed),
                                            fbb.CreateString(i % 2 ? "output_alias" : ""), 11, 12));
  }
  std::vector<double> seconds(rounds, 0.001);
  std::vector<flatbuffers::Offset<flatbuffers::String>> info{fbb.CreateString("torch=2.11"), fbb.CreateString("device=cpu")};
  auto reply = sandbox::CreateReply(fbb, ok, kind, fbb.CreateString(ok ? "" : "Traceback: boom"), fbb.CreateVector(t),
                                    fbb.CreateVector(seconds), fbb.CreateVector(seconds), fbb.CreateVector(seconds),
                                    fbb.CreateVector(seconds), 0, fbb.CreateVector(info), false, fbb.CreateVector(seconds),
                                    fbb.CreateVector(seconds), fbb.CreateString(kind == sandbox::ErrorKind::Hack ? "timer_patch" : ""));
  sandbox::SandboxMessageBuilder mb(fbb);
  mb.add_seq(seq);
  mb.add_reply(reply);
  fbb.Finish(mb.Finish(), sandbox::SandboxMessageIdentifier());
  return bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

void sandbox_seeds() {
  write("sandbox_reply", "load_ok", sandbox_reply(1, true, sandbox::ErrorKind::None, 0, 0));
  write("sandbox_reply", "trials", sandbox_reply(1, true, sandbox::ErrorKind::None, 3, 0));
  write("sandbox_reply", "timed", sandbox_reply(1, true, sandbox::ErrorKind::None, 1, 5));
  write("sandbox_reply", "hack", sandbox_reply(1, false, sandbox::ErrorKind::Hack, 0, 0));
  write("sandbox_reply", "other_seq", sandbox_reply(2, true, sandbox::ErrorKind::None, 0, 0));
  write("sandbox_reply", "near_truncated", truncated(sandbox_reply(1, true, sandbox::ErrorKind::None, 2, 2)));
}

void policy_seeds() {
  namespace p = crucible::policy;
  fs::path tmp = fs::temp_directory_path() / ("crucible-make-seeds-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  auto read_file = [](const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    return bytes(std::istreambuf_iterator<char>(in), {});
  };
  std::vector<float> a{1, 2, 3, 4}, b{5, 6};
  std::vector<std::uint16_t> h(6, 0x3c00);
  std::vector<std::int64_t> ids{1, 2, 3};
  std::vector<std::uint8_t> flags{1, 0};
  std::vector<p::tensor_view> tensors{
      {"model.norm.weight", p::dtype::f32, {4}, std::as_bytes(std::span<const float>(a))},
      {"lm_head.bias", p::dtype::f32, {2}, std::as_bytes(std::span<const float>(b))},
      {"embed.weight", p::dtype::bf16, {2, 3}, std::as_bytes(std::span<const std::uint16_t>(h))},
      {"ids", p::dtype::i64, {3}, std::as_bytes(std::span<const std::int64_t>(ids))},
      {"mask", p::dtype::boolean, {2}, std::as_bytes(std::span<const std::uint8_t>(flags))},
      {"empty", p::dtype::f16, {0, 4}, {}},
  };
  if (!p::write_safetensors(tmp / "all.safetensors", tensors)) std::abort();
  if (!p::write_safetensors(tmp / "one.safetensors", std::span(tensors).first(1), {})) std::abort();
  write("safetensors", "all_dtypes", read_file(tmp / "all.safetensors"));
  write("safetensors", "one_no_metadata", read_file(tmp / "one.safetensors"));
  write("safetensors", "near_truncated", truncated(read_file(tmp / "all.safetensors")));

  // The index the fuzzer's folder expects (safetensors_index.fuzz.cpp): a, b | c.
  std::vector<float> av(4, 1.0f), bv(2, 2.0f), cv(8, 3.0f);
  std::vector<p::tensor_view> abc{{"a", p::dtype::f32, {4}, std::as_bytes(std::span<const float>(av))},
                                  {"b", p::dtype::f32, {2}, std::as_bytes(std::span<const float>(bv))},
                                  {"c", p::dtype::f32, {8}, std::as_bytes(std::span<const float>(cv))}};
  p::checkpoint_write_options o;
  o.max_shard_bytes = 24;
  if (!p::write_checkpoint_weights(tmp / "ckpt", abc, o)) std::abort();
  write("safetensors_index", "written", read_file(tmp / "ckpt" / "model.safetensors.index.json"));
  fs::remove_all(tmp);

  using namespace crucible::policy::testing;
  auto bl = byte_level_tokenizer({{"a", "b"}, {"b", "c"}, {" ", "t"}, {"h", "e"}, {" t", "he"}});
  write("tokenizer", "byte_level", bl.dump());
  write("tokenizer", "byte_level_legacy_merges", byte_level_tokenizer({{" ", "t"}, {"h", "e"}}, true).dump());
  auto qwen = qwen2_style(byte_level_tokenizer({{"d", "e"}, {"de", "f"}, {" ", " "}}));
  qwen["added_tokens"] = {added(262, "<|endoftext|>", true), added(263, "<|im_start|>", true),
                          added(264, "<|im_end|>", true), added(265, "yes", false, false, false, false, true)};
  write("tokenizer", "qwen2_added", qwen.dump());
  auto llama = byte_level_tokenizer({});
  llama["added_tokens"] = {added(256, "<|begin_of_text|>", true), added(257, "<mask>", true, false, true, false)};
  llama["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFKC"}}}}};
  llama["post_processor"] = nlohmann::json::parse(R"({"type": "Sequence", "processors": [
      {"type": "ByteLevel", "trim_offsets": false},
      {"type": "TemplateProcessing",
       "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
       "pair": [],
       "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [256], "tokens": ["<|begin_of_text|>"]}}}]})");
  write("tokenizer", "template", llama.dump());
  nlohmann::json unk = {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}, {"<unk>", 1}}}, {"merges", nlohmann::json::array()},
                                   {"unk_token", "<unk>"}, {"fuse_unk", true}}}};
  write("tokenizer", "unk", unk.dump());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FUZZ_DIR\n", argv[0]);
    return 2;
  }
  root = argv[1];
  envelope_seeds();
  bus_seeds();
  referee_seeds();
  sandbox_seeds();
  policy_seeds();
  // The chunk fuzzer: a publication, then its chunks (policy_chunks.fuzz.cpp).
  write("policy_chunks", "two_chunks", fuzz::join_parts({publication(2, 10), chunk(1, bytes(4, 1)), chunk(0, bytes(6, 2))}));
  write("policy_chunks", "one_chunk", fuzz::join_parts({publication(1, 3), chunk(0, bytes(3, 9)), chunk(0, bytes(3, 9))}));
  write("policy_chunks", "empty", fuzz::join_parts({publication(1, 0), chunk(0, {})}));
  write("policy_chunks", "near_huge_one_chunk", fuzz::join_parts({publication(1, std::uint64_t{1} << 40), chunk(0, bytes(3, 9))}));
  write("policy_chunks", "bad_sizes", fuzz::join_parts({publication(3, 10), chunk(2, bytes(5, 1)), chunk(0, bytes(3, 1))}));
  return 0;
}
