// The learner's torch-free parts: the [learner] config section, the
// learning-rate schedule, staleness admission and metrics lines.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <numbers>

#include "actors/learner/admission.hpp"
#include "actors/learner/learner_config.hpp"
#include "actors/learner/learner_wire.hpp"
#include "actors/learner/publication.hpp"
#include "actors/learner/schedule.hpp"
#include "actors/learner/sft_data.hpp"
#include "actors/policy/tokenizer_test_support.hpp"
#include "actors/learner/step_report.hpp"
#include "runtime/base/error_text.hpp"

namespace crucible::learner {
namespace {

std::string write_config(const std::string& text) {
  auto path = (std::filesystem::temp_directory_path() / ("crucible-learner-" + std::to_string(::getpid()) + ".toml")).string();
  std::ofstream(path) << text;
  return path;
}

result<learner_options> read_config(const std::string& text) {
  auto f = config::file::load(write_config(text));
  REQUIRE(f.ok());
  learner_options o;
  auto s = config::read(f->get("learner"), o);
  if (!s) return s.error();
  return o;
}

TEST_CASE("[learner] maps onto learner_options and keeps defaults for absent keys") {
  auto o = read_config(
      "[learner]\nobjective = \"reinforce\"\nloss_aggregation = \"token_mean\"\nclip_eps_high = 0.28\n"
      "max_staleness = 2\nlearning_rate = 3e-6\ngroups_per_batch = 4\nmicro_batches = 2\npolicy = \"models/q\"\n");
  REQUIRE_MESSAGE(o.ok(), crucible::error_text(o));
  CHECK(o->objective == stage::reinforce);
  CHECK(o->loss_aggregation == aggregation::token_mean);
  CHECK(o->clip_eps_high == doctest::Approx(0.28));
  CHECK(o->clip_eps_low == doctest::Approx(0.2));
  CHECK(o->max_staleness == 2);
  CHECK(o->learning_rate == doctest::Approx(3e-6));
  CHECK(o->micro_batches == 2);
  CHECK(o->policy == "models/q");
  CHECK(o->reward_clip == doctest::Approx(1.5));
  CHECK(o->reward_window == learner_options{}.reward_window);
}

TEST_CASE("bad [learner] values are refused naming the key") {
  auto unknown = read_config("[learner]\nobjective = \"ppo\"\n");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message.find("[learner] objective") != std::string::npos);
  auto split = read_config("[learner]\ngroups_per_batch = 6\nmini_batches = 4\n");
  REQUIRE_FALSE(split.ok());
  CHECK(split.error().message.find("mini_batches") != std::string::npos);
  auto eps = read_config("[learner]\nclip_eps_low = 1.0\n");
  REQUIRE_FALSE(eps.ok());
  CHECK(eps.error().message.find("clip_eps_low") != std::string::npos);
  auto typo = read_config("[learner]\nlearnig_rate = 1e-5\n");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().message.find("learnig_rate") != std::string::npos);
}

TEST_CASE("the learning rate warms up linearly, then follows a cosine to the floor") {
  // warm-up 4 steps: 1/5, 2/5, 3/5, 4/5 of the peak, then the peak at step 4.
  CHECK(scheduled_learning_rate(1.0, 0, 4, 14, 0.1) == doctest::Approx(0.2));
  CHECK(scheduled_learning_rate(1.0, 3, 4, 14, 0.1) == doctest::Approx(0.8));
  CHECK(scheduled_learning_rate(1.0, 4, 4, 14, 0.1) == doctest::Approx(1.0));
  // Half-way through the cosine (step 9 of 4..14): floor + (peak - floor) / 2.
  CHECK(scheduled_learning_rate(1.0, 9, 4, 14, 0.1) == doctest::Approx(0.55));
  CHECK(scheduled_learning_rate(1.0, 14, 4, 14, 0.1) == doctest::Approx(0.1));
  CHECK(scheduled_learning_rate(1.0, 100, 4, 14, 0.1) == doctest::Approx(0.1));
  // total_steps 0: constant after warm-up.
  CHECK(scheduled_learning_rate(2.0, 1000, 0, 0, 0) == doctest::Approx(2.0));
}

rollout_group group_of(std::uint64_t version, std::vector<std::uint64_t> token_versions = {}) {
  rollout_group g;
  g.group_id = "g" + std::to_string(version);
  g.policy_version = version;
  rollout_sample s;
  s.completion_ids.resize(token_versions.size());
  s.token_versions = std::move(token_versions);
  g.samples.push_back(s);
  return g;
}

TEST_CASE("a group older than max_staleness versions is not admitted, and the error says to wait") {
  staleness_gate gate(2, 4);
  CHECK(gate.admit(group_of(3), 5).ok());
  auto old = gate.admit(group_of(2), 5);
  REQUIRE_FALSE(old.ok());
  CHECK(old.error().code == errc::unavailable);
  CHECK(old.error().message.find("max_staleness 2") != std::string::npos);
  // The oldest token decides: a group started at 4 with a token of version 1.
  CHECK_FALSE(gate.admit(group_of(4, {4, 1}), 5).ok());
  CHECK(gate.admit(group_of(4, {4, 3}), 5).ok());
  // A version from the future is a bad group, not a stale one.
  CHECK(gate.admit(group_of(6), 5).error().code == errc::invalid_argument);
}

TEST_CASE("rollouts may start groups while they would be trained within max_staleness, then wait") {
  staleness_gate gate(1, 2);  // max_staleness 1, 2 groups per batch
  // At version 0, (0 + 1 + 1) * 2 = 4 groups may be held (trained at versions 0 and 1).
  for (int r = 0; r < 4; ++r) CHECK(gate.try_start("r" + std::to_string(r), 0, 0));
  CHECK_FALSE(gate.try_start("r4", 0, 0));
  // Two arrive and are trained (version 1); their rollouts ask for their next.
  gate.arrived("r0", 0);
  gate.arrived("r1", 0);
  gate.trained(2);
  CHECK(gate.held() == 4);
  CHECK_FALSE(gate.try_start("r4", 0, 0));  // still at version 0: no room
  // With the weights of version 1, 2 more: r0's and r1's next groups.
  CHECK(gate.try_start("r0", 1, 1));
  CHECK(gate.try_start("r1", 1, 1));
  CHECK_FALSE(gate.try_start("r4", 0, 1));
  CHECK(gate.held() == 6);
}

TEST_CASE("a rollout's place is one, whatever it asks: restarted, given up or answered twice, it never closes the gate") {
  staleness_gate gate(0, 2);  // max_staleness 0, 2 groups per batch: 2 places at version 0
  CHECK(gate.try_start("a", 7, 0));
  // Killed before its group arrived, restarted: it asks for group 7 again
  // (its state file says 7), and again (its first answer was lost).
  for (int i = 0; i < 50; ++i) CHECK(gate.try_start("a", 7, 0));
  CHECK(gate.held() == 1);
  // Group 7 had no settled sample and was not sent: it asks for 8.
  CHECK(gate.try_start("a", 8, 0));
  CHECK(gate.held() == 1);
  // So the other rollout still fits; a third does not.
  CHECK(gate.try_start("b", 0, 0));
  CHECK_FALSE(gate.try_start("c", 0, 0));
  // Asking for its next group releases a rollout's last place before the
  // answer: a's 9 takes the place of its 8.
  CHECK(gate.try_start("a", 9, 0));
  CHECK(gate.held() == 2);
  // 100 kills of a and b between their start and their group's arrival,
  // each followed by the same ask: the two groups still arrive and train.
  for (int i = 0; i < 100; ++i) {
    CHECK(gate.try_start(i % 2 ? "a" : "b", i % 2 ? 9 : 0, 0));
  }
  gate.arrived("a", 9);
  gate.arrived("b", 0);
  gate.trained(2);
  CHECK(gate.held() == 2);
  CHECK(gate.try_start("a", 10, 1));
  CHECK(gate.try_start("b", 1, 1));
}

TEST_CASE("a place its rollout never asks for again is dropped after the lease") {
  using namespace std::chrono_literals;
  staleness_gate gate(0, 1, 10min);  // 1 group may be held at version 0
  const auto t0 = staleness_gate::clock::now();
  CHECK(gate.try_start("gone", 3, 0, t0));  // its node then dies for good
  CHECK_FALSE(gate.try_start("other", 0, 0, t0 + 9min));
  CHECK(gate.try_start("other", 0, 0, t0 + 11min));
  // Asking again renews a place: "other" holds it past the first lease.
  CHECK(gate.try_start("other", 0, 0, t0 + 20min));
  CHECK_FALSE(gate.try_start("gone", 3, 0, t0 + 29min));
}

TEST_CASE("learner.start reads back what the rollout wrote, and bad text names what is wrong") {
  auto s = start_from(start_text({12, 40, "rollout 2"}));
  REQUIRE(s.ok());
  CHECK(s->version == 12);
  CHECK(s->number == 40);
  CHECK(s->rollout == "rollout 2");
  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {"", "the rollout's version"}, {"12", "the group's number"}, {"x 1 r", "the rollout's version"},
           {"12 4x r", "the group's number"}, {"12 40", "no rollout name"}, {"12 40 ", "no rollout name"}}) {
    auto bad = start_from(text);
    INFO(text);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == errc::invalid_argument);
    CHECK(bad.error().message.find(says) != std::string::npos);
  }
}

TEST_CASE("a group trained before a restart is known to the restored gate with its version, so it is not trained twice") {
  staleness_gate gate(2, 2);
  gate.trained(std::vector<std::string>{"ro/g0-v0", "ro/g1-v0"}, 1);
  gate.trained(std::vector<std::string>{"ro/g2-v1", "other/g0-v1"}, 2);
  CHECK(gate.trained() == 4);
  CHECK(gate.trained_in("ro/g2-v1") == std::optional<std::uint64_t>(2));
  // The checkpoint keeps the ids (state.json "trained_groups"); the learner
  // restarted from it answers a group the hub delivers again with its version.
  staleness_gate restored(2, 2);
  restored.restore(gate.trained(), gate.trained_groups());
  CHECK(restored.trained_in("ro/g0-v0") == std::optional<std::uint64_t>(1));
  CHECK(restored.trained_in("other/g0-v1") == std::optional<std::uint64_t>(2));
  CHECK_FALSE(restored.trained_in("ro/g3-v1"));
  CHECK(restored.held() == 4);
}

TEST_CASE("the gate remembers the groups of the last remembered_versions versions only") {
  staleness_gate gate(2, 1);
  const std::uint64_t last = 3 * staleness_gate::remembered_versions;
  for (std::uint64_t v = 1; v <= last; ++v) gate.trained(std::vector<std::string>{"ro/g" + std::to_string(v)}, v);
  CHECK(gate.trained() == last);
  CHECK(gate.trained_groups().size() == staleness_gate::remembered_versions + 1);
  CHECK(gate.trained_in("ro/g" + std::to_string(last)) == std::optional<std::uint64_t>(last));
  const auto oldest = last - staleness_gate::remembered_versions;
  CHECK(gate.trained_in("ro/g" + std::to_string(oldest)) == std::optional<std::uint64_t>(oldest));
  CHECK_FALSE(gate.trained_in("ro/g" + std::to_string(oldest - 1)));
  CHECK_FALSE(gate.trained_in("ro/g1"));
}

TEST_CASE("a restored gate holds only trained groups, so the groups that come again after a crash fit") {
  staleness_gate gate(2, 2);
  for (int r = 0; r < 6; ++r) CHECK(gate.try_start("r" + std::to_string(r), 0, 0));  // (0 + 2 + 1) * 2
  CHECK_FALSE(gate.try_start("r6", 0, 0));
  for (int r = 0; r < 4; ++r) gate.arrived("r" + std::to_string(r), 0);
  gate.trained(2);  // version 1 trained on two of them; the process dies with 2 waiting and 2 places
  staleness_gate restored(2, 2);
  restored.restore(gate.trained());
  CHECK(restored.held() == 2);
  // The four not trained come again at version 1, and two more fit.
  for (int r = 2; r < 8; ++r) CHECK(restored.try_start("r" + std::to_string(r), 0, 1));
  CHECK_FALSE(restored.try_start("r8", 0, 1));  // (1 + 2 + 1) * 2
}

TEST_CASE("a step report is one JSON line with every metric") {
  step_report r;
  r.objective = "grpo";
  r.loss = -0.5;
  r.staleness = {{0, 3}, {2, 1}};
  r.tokens_per_second = 1234.5;
  auto j = nlohmann::json::parse(r.json());
  CHECK(j["objective"] == "grpo");
  CHECK(j["loss"].get<double>() == doctest::Approx(-0.5));
  CHECK(j["staleness"]["2"] == 1);
  CHECK(j["tokens_per_second"].get<double>() == doctest::Approx(1234.5));
  for (const char* key : {"kl", "clip_fraction", "weight_mean", "weight_min", "weight_max", "truncated_fraction",
                          "reward_mean", "smoothed_reward_mean", "grad_norm", "learning_rate", "version"})
    CHECK_MESSAGE(j.contains(key), key);
}

}  // namespace
}  // namespace crucible::learner

namespace crucible::learner {
namespace {

TEST_CASE("a RolloutGroup survives the wire with per-token versions, and a bad one is refused naming the sample") {
  rollout_group g;
  g.group_id = "g-1";
  g.task_id = "level1/matmul";
  g.policy_version = 7;
  g.samples.push_back({{1, 2, 3}, {4, 5}, {-0.5f, -1.5f}, {6, 7}, 1.25});
  g.samples.push_back({{1, 2, 3}, {9}, {-2.0f}, {}, 0});
  messages::envelope_writer w;
  auto bytes = w.finish(build_group(w.fbb(), g, "rollout-a"), "rollout-a", "g-1");
  auto env = messages::open(bytes);
  REQUIRE(env.ok());
  auto back = group_from(*(*env)->payload_as_RolloutGroup());
  REQUIRE_MESSAGE(back.ok(), crucible::error_text(back));
  CHECK(back->group_id == "g-1");
  CHECK(back->task_id == "level1/matmul");
  CHECK(back->policy_version == 7);
  REQUIRE(back->samples.size() == 2);
  CHECK(back->samples[0].completion_ids == std::vector<std::int32_t>({4, 5}));
  CHECK(back->samples[0].behaviour_logprobs == std::vector<float>({-0.5f, -1.5f}));
  CHECK(back->samples[0].token_versions == std::vector<std::uint64_t>({6, 7}));
  CHECK(back->samples[0].reward == 1.25);
  CHECK(back->samples[1].token_versions.empty());
  CHECK(back->oldest_version() == 6);

  g.samples[1].behaviour_logprobs.clear();
  messages::envelope_writer w2;
  auto bad = w2.finish(build_group(w2.fbb(), g, "rollout-a"), "rollout-a", "g-1");
  auto e = group_from(*(*messages::open(bad))->payload_as_RolloutGroup());
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().message.find("sample 1") != std::string::npos);
}

// An input kept by a fuzzer (fuzz/regressions/FUZZER/NAME).
std::vector<std::uint8_t> fuzz_regression(const std::string& name) {
  std::ifstream in(std::string(CRUCIBLE_SOURCE_DIR) + "/fuzz/regressions/" + name, std::ios::binary);
  REQUIRE_MESSAGE(in, name);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST_CASE("the learner's answer to a trained group reads back as its version, and no other text does") {
  CHECK(trained_text(7) == "trained in version 7");
  CHECK(trained_version(trained_text(7)) == 7u);
  CHECK(trained_version(trained_text(0)) == 0u);
  for (const char* other : {"", "hi", "trained in version ", "trained in version 3 of 4", "trained in version -1"})
    CHECK_FALSE(trained_version(other));
}

TEST_CASE("a stale refusal reads as one, and neither a trained answer nor another failure does") {
  CHECK(stale_refusal("group r/g1-v0 has tokens of version 0") == "stale: group r/g1-v0 has tokens of version 0");
  CHECK(is_stale_refusal(stale_refusal("")));
  for (const char* other : {"", "stale", "trained in version 3", "invalid_argument: group r/g1-v9 claims policy version 9"})
    CHECK_FALSE(is_stale_refusal(other));
}

TEST_CASE("a RolloutGroup whose per-token versions sit off their 8-byte boundary is refused as corrupt, not read") {
  // Found by fuzz/envelope.fuzz.cpp: the FlatBuffers verifier checks only a
  // vector's length for alignment, and reading the uint64s was undefined.
  auto bytes = fuzz_regression("envelope/rollout_group_misaligned_versions");
  auto env = messages::open(bytes);
  REQUIRE_MESSAGE(env.ok(), crucible::error_text(env));
  REQUIRE((*env)->payload_as_RolloutGroup());
  auto g = group_from(*(*env)->payload_as_RolloutGroup());
  REQUIRE_FALSE(g.ok());
  CHECK(g.error().code == errc::corrupt);
  CHECK_MESSAGE(g.error().message.find(": token_policy_versions: a vector of 8-byte values off its 8-byte boundary") != std::string::npos, g.error().message);
}

// A kept input of several messages, each after its little-endian u32 length (fuzz/fuzz_support.hpp).
std::vector<std::vector<std::uint8_t>> fuzz_parts(const std::string& name) {
  auto kept = fuzz_regression(name);
  std::vector<std::vector<std::uint8_t>> parts;
  for (std::size_t at = 0; at + 4 <= kept.size();) {
    std::size_t n = kept[at] | (kept[at + 1] << 8) | (kept[at + 2] << 16) | (std::size_t(kept[at + 3]) << 24);
    at += 4;
    n = std::min(n, kept.size() - at);
    parts.emplace_back(kept.begin() + static_cast<std::ptrdiff_t>(at), kept.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
  }
  return parts;
}

TEST_CASE("a publication of nothing in two chunks takes no chunk, instead of writing one past its empty buffer") {
  // Found by fuzz/policy_chunks.fuzz.cpp: with total_bytes 0 any first chunk
  // "fitted", and the next was copied past the end of the 0-byte buffer.
  auto parts = fuzz_parts("policy_chunks/empty_in_two_chunks");
  REQUIRE(parts.size() >= 2);
  auto announced = messages::open(parts[0]);
  REQUIRE(announced.ok());
  auto p = publication_from(*(*announced)->payload_as_PolicyPublication());
  CHECK(p.total_bytes == 0);
  CHECK(p.chunks > 1);
  weight_assembler a(p);
  bool refused = false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    auto c = messages::open(parts[i]);
    if (!c || !(*c)->payload_as_PolicyChunk()) continue;
    auto added = a.add((*c)->payload_as_PolicyChunk()->index(), messages::span_of((*c)->payload_as_PolicyChunk()->data()));
    if (!added) {
      CHECK(added.error().code == errc::invalid_argument);
      CHECK(added.error().message.find("do not divide the announced 0") != std::string::npos);
      refused = true;
    }
  }
  CHECK(refused);
  CHECK_FALSE(a.complete());
  // Nothing in one chunk is still a publication that completes.
  publication empty = p;
  empty.chunks = 1;
  empty.sha256 = weights_digest({});
  weight_assembler one(empty);
  REQUIRE(one.add(0, {}).ok());
  CHECK(one.complete());
  CHECK(one.finish().ok());
}

TEST_CASE("a 3-byte chunk of a publication announcing 1 TB in one chunk is refused before anything is allocated") {
  // Found with fuzz/policy_chunks.fuzz.cpp: the buffer of total_bytes was
  // allocated before the chunk's size was checked. The kept input is the
  // PolicyPublication and the PolicyChunk, each after its u32 length.
  auto parts = fuzz_parts("policy_chunks/huge_one_chunk");
  REQUIRE(parts.size() == 2);
  auto announced = messages::open(parts[0]);
  REQUIRE(announced.ok());
  auto p = publication_from(*(*announced)->payload_as_PolicyPublication());
  CHECK(p.total_bytes == std::uint64_t{1} << 40);
  auto chunk = messages::open(parts[1]);
  REQUIRE(chunk.ok());
  weight_assembler a(p);
  auto added = a.add(0, messages::span_of((*chunk)->payload_as_PolicyChunk()->data()));
  REQUIRE_FALSE(added.ok());
  CHECK(added.error().code == errc::invalid_argument);
  CHECK(added.error().message.find("3 bytes where 1099511627776 were due") != std::string::npos);
  CHECK_FALSE(a.complete());
}

// The raw bytes of a lower-case hex string.
std::vector<std::uint8_t> unhex(const std::string& hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

TEST_CASE("the weights digest is the SHA-256 of the SHA-256s of 4 MiB blocks, whatever the number of threads") {
  std::vector<std::uint8_t> weights(2 * digest_block_bytes + 12345);
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 13);
  std::vector<std::uint8_t> blocks;
  for (std::uint64_t begin = 0; begin < weights.size(); begin += digest_block_bytes) {
    const auto n = std::min<std::uint64_t>(digest_block_bytes, weights.size() - begin);
    auto d = unhex(sha256_hex(std::span<const std::uint8_t>(weights).subspan(begin, n)));
    blocks.insert(blocks.end(), d.begin(), d.end());
  }
  CHECK(blocks.size() == 3 * 32);
  const auto expected = sha256_hex(blocks);
  CHECK(weights_digest(weights, 1) == expected);
  CHECK(weights_digest(weights, 5) == expected);
  CHECK(weights_digest(weights) == expected);
  weights[digest_block_bytes + 7] ^= 1;
  CHECK(weights_digest(weights) != expected);
  CHECK(weights_digest(std::vector<std::uint8_t>{}) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("weights written on several threads read back byte for byte, hashed in the same pass") {
  std::vector<std::uint8_t> weights(digest_block_bytes + 999);
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<std::uint8_t>(i * 7 + (i >> 11));
  const auto file = std::filesystem::temp_directory_path() / ("crucible-weights-" + std::to_string(::getpid()));
  auto digest = write_weights(weights, file, true, 3);
  REQUIRE_MESSAGE(digest.ok(), crucible::error_text(digest));
  CHECK(*digest == weights_digest(weights));
  std::ifstream in(file, std::ios::binary);
  std::vector<std::uint8_t> back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(back == weights);
  CHECK(!std::filesystem::exists(file.string() + ".tmp"));
  auto undigested = write_weights(std::span<const std::uint8_t>(weights).first(10), file, false);
  REQUIRE(undigested.ok());
  CHECK(undigested->empty());
  CHECK(std::filesystem::file_size(file) == 10);
  std::filesystem::remove(file);
  auto nowhere = write_weights(weights, file / "no" / "such" / "folder", true);
  REQUIRE_FALSE(nowhere.ok());
  CHECK(nowhere.error().code == errc::io);
}

TEST_CASE("published weights reassemble from chunks in any order, repeats included, and the digest catches damage") {
  std::vector<std::uint8_t> weights(1000);
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<std::uint8_t>(i * 31 + 7);
  auto p = describe_weights(4, weights, 300);
  CHECK(p.chunks == 4);
  CHECK(p.total_bytes == 1000);
  CHECK(p.sha256 == weights_digest(weights));
  CHECK(describe_weights(4, 1000, weights_digest(weights), 300).text() == p.text());

  messages::envelope_writer w;
  auto announced = publication_from(*(*messages::open(w.finish(build_publication(w.fbb(), p), "learner")))->payload_as_PolicyPublication());
  CHECK(announced.sha256 == p.sha256);
  weight_assembler a(announced);
  for (std::uint32_t i : {3u, 1u, 1u, 0u}) REQUIRE(a.add(i, chunk_of(weights, i, 300)).ok());
  CHECK_FALSE(a.complete());
  CHECK(a.finish().error().code == errc::unavailable);
  messages::envelope_writer wc;
  auto chunk_bytes = wc.finish(build_chunk(wc.fbb(), 4, 2, chunk_of(weights, 2, 300)), "learner");
  const auto* chunk = (*messages::open(chunk_bytes))->payload_as_PolicyChunk();
  REQUIRE(a.add(chunk->index(), messages::span_of(chunk->data())).ok());
  auto whole = a.finish();
  REQUIRE(whole.ok());
  CHECK(*whole == weights);
  CHECK_FALSE(a.add(4, chunk_of(weights, 0, 300)).ok());

  weight_assembler short_chunk(p);
  REQUIRE(short_chunk.add(0, chunk_of(weights, 0, 300)).ok());
  CHECK(short_chunk.add(1, std::span<const std::uint8_t>(weights).subspan(300, 299)).error().code == errc::invalid_argument);
  CHECK(short_chunk.add(3, chunk_of(weights, 2, 300)).error().code == errc::invalid_argument);
  CHECK(weight_assembler(p).add(0, std::span<const std::uint8_t>(weights).first(200)).error().code == errc::invalid_argument);

  weight_assembler damaged(p);
  auto broken = weights;
  broken[500] ^= 1;
  for (std::uint32_t i = 0; i < 4; ++i) REQUIRE(damaged.add(i, chunk_of(broken, i, 300)).ok());
  CHECK(damaged.finish().error().code == errc::corrupt);
}

}  // namespace
}  // namespace crucible::learner

namespace crucible::learner {
namespace {

TEST_CASE("SFT JSON Lines become token pairs with eos after the completion, a bad line is named") {
  const auto tok = *policy::tokenizer::parse(policy::testing::byte_level_tokenizer({}).dump(), "test");
  const auto dir = std::filesystem::temp_directory_path();
  const auto good = dir / ("crucible-sft-" + std::to_string(::getpid()) + ".jsonl");
  std::ofstream(good) << "{\"prompt\": \"ab\", \"completion\": \"c\"}\n\n{\"prompt\": \"x\", \"completion\": \"yz\"}\n";
  auto pairs = read_sft_jsonl(good, tok, 255);
  REQUIRE_MESSAGE(pairs.ok(), crucible::error_text(pairs));
  REQUIRE(pairs->size() == 2);
  CHECK((*pairs)[0].prompt_ids == std::vector<std::int32_t>({'a', 'b'}));
  CHECK((*pairs)[0].completion_ids == std::vector<std::int32_t>({'c', 255}));
  CHECK((*pairs)[1].completion_ids == std::vector<std::int32_t>({'y', 'z', 255}));
  std::ofstream(good) << "{\"prompt\": \"ab\", \"completion\": \"c\"}\n{\"prompt\": \"ab\"}\n";
  auto bad = read_sft_jsonl(good, tok, std::nullopt);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find(":2: \"completion\"") != std::string::npos);
  std::filesystem::remove(good);
}

}  // namespace
}  // namespace crucible::learner
