// The learner actor: trains when a batch of groups is in and answers the
// groups then, refuses stale groups at once, publishes every version (the
// chunks reassemble into loadable weights), writes metrics and checkpoints,
// and tells rollouts when to wait.
// LibTorch first: glog defines a CHECK that doctest's must replace.
#include "actors/learner/learner_test_support.hpp"

#include <doctest/doctest.h>

#include <fstream>

#include "actors/learner/learner_actor.hpp"
#include "actors/learner/learner_wire.hpp"
#include "actors/policy/test_support.hpp"

namespace crucible::learner {
namespace {

using namespace std::chrono_literals;

template <class T, class... Ts>
T ask(caf::scoped_actor& self, const learner_actor& actor, Ts... request) {
  T out{};
  self->request(actor, 30s, request...).receive([&](T& r) { out = std::move(r); },
                                                 [&](caf::error& e) { FAIL("learner actor: " << caf::to_string(e)); });
  return out;
}

std::vector<std::uint8_t> fetch(caf::scoped_actor& self, const learner_actor& actor, const publication& p) {
  weight_assembler a(p);
  for (std::uint32_t i = 0; i < p.chunks; ++i) {
    auto r = ask<learner_reply>(self, actor, chunk_atom::value, p.version, i);
    REQUIRE_MESSAGE(r.ok, r.text);
    REQUIRE(a.add(i, r.data).ok());
  }
  auto bytes = a.finish();
  REQUIRE_MESSAGE(bytes.ok(), (bytes.ok() ? "" : bytes.error().text()));
  return *bytes;
}

TEST_CASE("the learner actor trains per batch, publishes each version in chunks, checkpoints and refuses stale groups") {
  torch::set_num_threads(1);
  policy::testing::scratch_dir dir;
  auto initial = testing::tiny_policy(41);
  REQUIRE(policy::save_causal_lm(*initial, dir / "policy").ok());
  policy::testing::write_file(dir / "policy" / "tokenizer.json", policy::testing::byte_level_tokenizer({}).dump());
  learner_options o = testing::tiny_options();
  o.policy = (dir / "policy").string();
  o.groups_per_batch = 2;
  o.max_staleness = 1;
  o.checkpoint_dir = (dir / "checkpoints").string();
  o.checkpoint_every = 1;
  o.metrics_file = (dir / "metrics.jsonl").string();
  o.publish_chunk_bytes = 20000;

  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto actor = spawn_learner_actor(sys, o);
  REQUIRE_MESSAGE(actor.ok(), (actor.ok() ? "" : actor.error().text()));
  caf::scoped_actor self{sys};

  // Version 0 is published at start; its chunks rebuild the initial weights.
  auto v0 = ask<publication>(self, *actor, latest_atom::value);
  CHECK(v0.version == 0);
  CHECK(v0.chunks > 1);
  auto bytes = fetch(self, *actor, v0);
  policy::testing::write_file(dir / "policy" / "model.safetensors", std::string(bytes.begin(), bytes.end()));
  auto reloaded = policy::load_causal_lm(dir / "policy", {"cpu", policy::dtype::f32});
  REQUIRE(reloaded.ok());
  CHECK(torch::equal((*reloaded)->parameters()[1], initial->parameters()[1]));

  // Two groups make a batch: both are answered once it is trained.
  for (int version = 0; version < 2; ++version) {
    auto groups = testing::sample_groups(*initial, static_cast<std::uint64_t>(version), 60 + version, 2, 4, 6);
    std::vector<learner_reply> replies;
    std::vector<decltype(self->request(*actor, 30s, group_atom::value, groups[0]))> pending;
    for (auto& g : groups) pending.push_back(self->request(*actor, 30s, group_atom::value, g));
    for (auto& h : pending)
      h.receive([&](learner_reply& r) { replies.push_back(r); },
                [&](caf::error& e) { FAIL("learner actor: " << caf::to_string(e)); });
    REQUIRE(replies.size() == 2);
    for (auto& r : replies) {
      CHECK(r.ok);
      CHECK(r.text == "trained in version " + std::to_string(version + 1));
    }
  }
  auto v2 = ask<publication>(self, *actor, latest_atom::value);
  CHECK(v2.version == 2);
  CHECK(v2.sha256 != v0.sha256);
  CHECK(fetch(self, *actor, v2).size() == v2.total_bytes);
  // An older version's chunks are gone.
  CHECK_FALSE(ask<learner_reply>(self, *actor, chunk_atom::value, std::uint64_t{0}, std::uint32_t{0}).ok);

  // A group of version 0 is two versions behind: refused at once, saying
  // why, as a stale refusal (the rollout samples it again).
  auto stale = ask<learner_reply>(self, *actor, group_atom::value, testing::sample_groups(*initial, 0, 9, 1, 2, 4)[0]);
  CHECK_FALSE(stale.ok);
  CHECK(stale.text.find("max_staleness 1") != std::string::npos);
  CHECK(is_stale_refusal(stale.text));

  // Rollouts at version 2 may hold (2 + 1 + 1) * 2 = 8 groups in all; 4 are
  // trained, so 4 rollouts may start one each, and one asking twice for the
  // same group holds one place.
  int go = 0;
  while (go < 20 && ask<bool>(self, *actor, start_atom::value, "r" + std::to_string(go), std::uint64_t{0},
                              std::uint64_t{2}))
    ++go;
  CHECK(go == 4);
  CHECK(ask<bool>(self, *actor, start_atom::value, std::string("r0"), std::uint64_t{0}, std::uint64_t{2}));

  // A metrics line per version and a checkpoint of the last.
  std::ifstream metrics(dir / "metrics.jsonl");
  int lines = 0;
  for (std::string line; std::getline(metrics, line);) ++lines;
  CHECK(lines == 2);
  CHECK(latest_checkpoint_weights(dir / "checkpoints").ok());
  self->send_exit(*actor, caf::exit_reason::user_shutdown);
}

TEST_CASE("a checkpoint that cannot be written does not fail the training step: its groups are answered trained") {
  torch::set_num_threads(1);
  policy::testing::scratch_dir dir;
  auto initial = testing::tiny_policy(43);
  REQUIRE(policy::save_causal_lm(*initial, dir / "policy").ok());
  learner_options o = testing::tiny_options();
  o.policy = (dir / "policy").string();
  o.groups_per_batch = 1;
  o.metrics_file = (dir / "metrics.jsonl").string();
  o.checkpoint_dir = (dir / "not-a-folder").string();  // a file: no checkpoint can go there
  o.checkpoint_every = 1;
  policy::testing::write_file(o.checkpoint_dir, "x");

  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto actor = spawn_learner_actor(sys, o);
  REQUIRE_MESSAGE(actor.ok(), (actor.ok() ? "" : actor.error().text()));
  caf::scoped_actor self{sys};
  for (std::uint64_t version = 0; version < 2; ++version) {
    auto group = testing::sample_groups(*initial, version, 70 + version, 1, 4, 6)[0];
    auto reply = ask<learner_reply>(self, *actor, group_atom::value, group);
    CHECK_MESSAGE(reply.ok, reply.text);
    CHECK(reply.text == "trained in version " + std::to_string(version + 1));
  }
  CHECK(ask<publication>(self, *actor, latest_atom::value).version == 2);
  self->send_exit(*actor, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace crucible::learner
