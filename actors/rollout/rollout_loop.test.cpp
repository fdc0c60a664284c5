// The rollout end to end on a real hub: `crucible hub` (with its referee), a
// CPU evaluator (quick protocol) and the exemplar store as child processes;
// in this process the rollout actor with a tiny policy made here and a
// worker serving the learner's job kind. Two groups on cpu/gelu_tanh go out,
// their candidates settle through the referee and the evaluator, the second
// prompt shows the first group's success as a previous code, and each
// RolloutGroup that reaches the learner's job kind carries the sampled
// tokens with log-probs the policy reproduces. Then groups sampled together
// ([rollout] batch_groups, slots) against groups sampled one by one, and a
// group the learner refuses as too stale, sampled again.
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "actors/learner/learner_test_support.hpp"
#include "actors/learner/learner_wire.hpp"
#include "actors/learner/publication.hpp"
#include "actors/policy/causal_lm.hpp"
#include "actors/policy/tokenizer_test_support.hpp"
#include "actors/rollout/extract.hpp"
#include "actors/rollout/rollout_actor.hpp"
#include "runtime/bus/zmq_transport.hpp"
#include "runtime/metrics/read_back.hpp"

#include <prometheus/registry.h>
#include "runtime/node/caf_types.hpp"
#include "runtime/node/worker_actor.hpp"
#include "tests/support/process.hpp"

// After LibTorch: glog defines CHECK too, and doctest's must win.
#include <doctest/doctest.h>

#include <set>

using namespace crucible;
using namespace crucible::testing;
using namespace std::chrono_literals;
using messages::str;

namespace {

const std::string tasks = std::string(CRUCIBLE_SOURCE_DIR) + "/configs/tasks";
constexpr std::int32_t code_token = 256, prose_token = 257;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The completion token 256 stands for: a whole answer whose code is the
// task's known faster variant.
std::string code_answer() {
  return "## Code Implementation\n```python\n" + read_text(tasks + "/cpu/gelu_tanh/faster.py") + "```\n";
}

// A byte-level tokenizer with two added tokens: 256 (an answer with code)
// and 257 (prose without code).
std::string test_tokenizer_json() {
  auto j = policy::testing::byte_level_tokenizer({});
  j["added_tokens"] = {policy::testing::added(code_token, code_answer(), false),
                       policy::testing::added(prose_token, "no code here\n", false)};
  return j.dump();
}
policy::tokenizer test_tokenizer() {
  auto tok = policy::tokenizer::parse(test_tokenizer_json(), "test tokenizer");
  REQUIRE_MESSAGE(tok.ok(), (tok.ok() ? std::string() : tok.error().text()));
  return *tok;
}

// A tiny Qwen2-shaped network built so that the residual stream is the
// token's embedding (attention and MLP outputs are zero) and every
// embedding is e0: the next token is 256 or 257 with probability about 0.48
// each, any other with about 0.0002. Generation still runs the whole network.
// Without code, 256 is as unlikely as the rest: completions without code,
// which the referee settles NoCode at once, with no evaluator.
std::shared_ptr<policy::causal_lm> test_network(bool with_code = true) {
  auto c = learner::testing::tiny_config();
  c.vocab_size = 258;
  c.max_position_embeddings = 8192;
  c.tie_word_embeddings = false;
  auto model = std::make_shared<policy::causal_lm>(c, policy::model_placement{"cpu", policy::dtype::f32});
  torch::NoGradGuard no_grad;
  for (auto& p : model->named_parameters()) {
    auto& t = p.value();
    t.zero_();
    if (p.key().ends_with("norm.weight")) t.fill_(1.0);
    if (p.key() == "model.embed_tokens.weight") t.select(1, 0).fill_(1.0);
    if (p.key() == "lm_head.weight") {
      if (with_code) t[code_token][0] = 1.0;
      t[prose_token][0] = 1.0;
    }
  }
  return model;
}

// The learner's side of the protocol (the job kinds of actors/learner's
// role): every RolloutGroup is kept, except the first stale_refusals, which
// are refused as the learner refuses a group too stale to train; start
// always says go; latest is version 0 until the first group arrives, then
// version 1 (the same weights), served as chunks of chunk_bytes.
struct learner_stand_in final : node::job_handler {
  static constexpr std::uint64_t chunk_bytes = 64 << 10;
  std::vector<std::uint8_t> weights;  // a safetensors file
  std::mutex mu;
  int stale_refusals = 0;               // GUARDED_BY(mu)
  std::vector<bus::bytes> groups;       // GUARDED_BY(mu)
  std::vector<std::string> group_jobs;  // GUARDED_BY(mu): every learner.group job's id, refused ones too
  int starts = 0, chunks = 0;           // GUARDED_BY(mu)

  void run(const bus::worker_session::job_request& job, done_fn done) override {
    std::lock_guard lock(mu);
    std::uint64_t version = group_jobs.empty() ? 0 : 1;
    messages::envelope_writer w;
    if (job.kind == "learner.group") {
      group_jobs.push_back(job.id);
      if (stale_refusals > 0 && stale_refusals--)
        return done(msg::JobStatus::Failed, {}, learner::stale_refusal("too old for the stand-in"));
      groups.push_back(job.payload);
      return done(msg::JobStatus::Ok, {}, {});
    }
    if (job.kind == "learner.start") {
      ++starts;
      return done(msg::JobStatus::Ok, {'g', 'o'}, {});
    }
    if (job.kind == "learner.latest") {
      auto p = learner::describe_weights(version, weights, chunk_bytes);
      return done(msg::JobStatus::Ok, w.finish(learner::build_publication(w.fbb(), p), "learner"), {});
    }
    if (job.kind != "learner.chunk") return done(msg::JobStatus::Failed, {}, "unexpected kind " + job.kind);
    std::istringstream in(std::string(job.payload.begin(), job.payload.end()));
    std::uint64_t v = 0;
    std::uint32_t index = 0;
    in >> v >> index;
    ++chunks;
    auto part = learner::chunk_of(weights, index, chunk_bytes);
    done(msg::JobStatus::Ok, w.finish(learner::build_chunk(w.fbb(), v, index, part), "learner"), {});
  }
};

bus::peer_options fast_peer(const std::string& name) {
  bus::peer_options p;
  p.name = name;
  p.heartbeat = 100ms;
  p.dead_after = 1500ms;
  p.retry = 300ms;
  p.accepted_retry = 600ms;
  return p;
}

// `crucible hub` (with its referee) on a fresh port and folder, its config
// file holding the fast bus settings of fast_peer for the roles started
// beside it; killed with the test.
struct test_hub {
  explicit test_hub(const std::string& name)
      : dir(temp_dir(name)),
        config(write_config(dir)),
        address("tcp://127.0.0.1:" + std::to_string(pick_port())),
        process(crucible_binary(), {"hub", "--config", config, "--bind", address, "--ledger", dir + "/ledger"},
                dir + "/hub.log") {
    REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "hub listening", 30s), read_file(dir + "/hub.log"));
  }
  static std::string write_config(const std::string& dir) {
    std::string config = dir + "/loop.toml";
    std::ofstream(config) << "[hub]\nheartbeat_ms = 100\ndead_after_ms = 1500\n"
                             "[bus]\nheartbeat_ms = 100\ndead_after_ms = 1500\nretry_ms = 300\naccepted_retry_ms = 600\n";
    return config;
  }
  const std::string dir, config, address;
  child process;
};

// Saves `network` as DIR/published (the folder a rollout loads, tokenizer
// too) and gives its safetensors bytes to the stand-in to serve.
void publish_weights(learner_stand_in& learner, policy::causal_lm& network, const std::string& dir) {
  auto saved = std::filesystem::path(dir) / "published";
  REQUIRE(policy::save_causal_lm(network, saved).ok());
  std::ofstream(saved / "tokenizer.json") << test_tokenizer_json();
  auto bytes = read_text((saved / "model.safetensors").string());
  learner.weights.assign(bytes.begin(), bytes.end());
}

// A worker named "learner" serving `kinds` with the stand-in.
caf::actor serve_learner(caf::actor_system& sys, const std::string& address, std::shared_ptr<learner_stand_in> learner,
                         std::vector<std::string> kinds = {"learner.group", "learner.start", "learner.latest",
                                                           "learner.chunk"}) {
  auto lp = fast_peer("learner");
  lp.role = msg::Role::Learner;
  lp.job_kinds = std::move(kinds);
  lp.slots = 8;
  auto lt = bus::connect_peer_transport(address, "learner");
  REQUIRE(lt.ok());
  return node::spawn_worker(sys, lp, std::move(learner), std::shared_ptr<bus::transport>(std::move(*lt)));
}

// Whether `rollout` stops by itself (exit reason normal) within `wait`.
bool stops_normally(caf::actor_system& sys, const caf::actor& rollout, std::chrono::seconds wait) {
  caf::scoped_actor self{sys};
  self->monitor(rollout);
  bool down = false;
  self->receive([&](caf::down_msg& d) { down = d.reason == caf::exit_reason::normal; }, caf::after(wait) >> [] {});
  return down;
}

}  // namespace

TEST_CASE("a rollout's groups settle through a real referee and evaluator and reach the learner's job kind") {
  test_hub hub("rollout-loop");
  const std::string &dir = hub.dir, &config = hub.config, &address = hub.address;
  child evaluator(crucible_binary(),
                  {"evaluator", "--config", config, "--connect", address, "--name", "ev", "--tasks", tasks,
                   "--protocol", "quick"},
                  dir + "/ev.log");
  child exemplars(crucible_binary(),
                  {"exemplar", "--config", config, "--connect", address, "--name", "exemplar", "--db", dir + "/db"},
                  dir + "/exemplar.log");
  REQUIRE(wait_for_text(dir + "/ev.log", "registered with hub", 20s));
  REQUIRE(wait_for_text(dir + "/exemplar.log", "registered with hub", 20s));

  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  auto network = test_network();
  auto tok = test_tokenizer();
  auto learner = std::make_shared<learner_stand_in>();
  publish_weights(*learner, *network, dir);
  REQUIRE(learner->weights.size() > 2 * learner_stand_in::chunk_bytes);
  auto learner_worker = serve_learner(sys, address, learner);

  rollout::rollout_options o;
  o.model = dir + "/published";  // config.json for the folder of received weights
  o.tasks_dir = tasks;
  o.tasks = {"cpu/gelu_tanh"};
  o.platform = "CPU";
  o.group_size = 4;
  o.max_new_tokens = 2;
  o.seed = 5;
  o.groups = 2;
  o.exemplar_deadline = 20000ms;
  o.settle_deadline = 240000ms;
  o.state_file = dir + "/rollout.state";
  o.weights_dir = dir + "/weights";
  auto rt = bus::connect_peer_transport(address, "ro");
  REQUIRE(rt.ok());
  auto rollout = rollout::spawn_rollout(sys, o, policy::policy(network, tok), fast_peer("ro"),
                                        std::shared_ptr<bus::transport>(std::move(*rt)));
  REQUIRE_MESSAGE(rollout.ok(), (rollout.ok() ? std::string() : rollout.error().text()));

  // The rollout stops by itself after its two groups are with the learner.
  CHECK_MESSAGE(stops_normally(sys, *rollout, 300s),
                "the rollout did not finish its two groups; hub log:\n" << read_text(dir + "/hub.log"));
  anon_send_exit(learner_worker, caf::exit_reason::user_shutdown);
  CHECK(read_text(o.state_file) == "2\n");

  std::vector<bus::bytes> got;
  {
    std::lock_guard lock(learner->mu);
    got = learner->groups;
  }
  REQUIRE(got.size() == 2);
  {
    std::lock_guard lock(learner->mu);
    CHECK(learner->starts == 2);
    CHECK(learner->chunks == static_cast<int>((learner->weights.size() + learner_stand_in::chunk_bytes - 1) /
                                              learner_stand_in::chunk_bytes));
  }
  int with_code = 0, successes = 0;
  std::set<std::string> codes;  // distinct: the referee measures each once ([referee] reuse_identical)
  for (std::size_t k = 0; k < got.size(); ++k) {
    auto env = messages::open(got[k]);
    REQUIRE(env.ok());
    auto* wire = (*env)->payload_as_RolloutGroup();
    REQUIRE(wire);
    // The second group was sampled after switching to version 1, received in chunks.
    CHECK(std::string(str(wire->group_id())) == "ro/g" + std::to_string(k) + "-v" + std::to_string(k));
    CHECK(str(wire->task_id()) == "cpu/gelu_tanh");
    CHECK(str(wire->rollout()) == "ro");
    CHECK(wire->policy_version() == k);
    auto group = learner::group_from(*wire);  // what the learner will decode
    REQUIRE_MESSAGE(group.ok(), (group.ok() ? std::string() : group.error().text()));
    REQUIRE(group->samples.size() == 4);

    std::vector<policy::generation> gens;
    for (std::size_t i = 0; i < wire->samples()->size(); ++i) {
      auto* s = wire->samples()->Get(static_cast<flatbuffers::uoffset_t>(i));
      CHECK(std::string(str(s->candidate_id())).rfind(std::string(str(wire->group_id())) + "/" + std::to_string(i) + "-", 0) == 0);
      const auto& sample = group->samples[i];
      CHECK(sample.completion_ids.size() == 2);
      // The prompt is the contrastive prompt of the task, with the first
      // group's success as a previous code in the second group's.
      std::string prompt = tok.decode(sample.prompt_ids);
      CHECK(prompt.find("task cpu/gelu_tanh: GELU, tanh approximation") != std::string::npos);
      CHECK((prompt.find("### Previous code 1 (score ") != std::string::npos) == (k == 1 && successes > 0));
      // Code iff the completion has it; settled by the referee with the evaluator's measurement.
      auto code = rollout::extract_code(tok.decode(sample.completion_ids));
      CAPTURE(str(s->candidate_id()));
      if (code.code) {
        ++with_code;
        codes.insert(*code.code);
        CHECK(s->settlement() == msg::SettlementStatus::Success);
        CHECK(s->reward() >= 1.0);
        successes += s->settlement() == msg::SettlementStatus::Success;
      } else {
        CHECK(s->settlement() == msg::SettlementStatus::NoCode);
        CHECK(s->reward() == 0.0);
      }
      gens.push_back({sample.prompt_ids, sample.completion_ids, sample.behaviour_logprobs, {}, {}});
    }
    // The behaviour log-probs are the policy's own under the same temperature.
    auto batch = policy::make_token_batch(gens, torch::kCPU);
    auto lp_now = policy::token_logprobs(*network, batch.input_ids, batch.attention_mask, batch.first_target, 1.0);
    auto diff = (lp_now - batch.behaviour_logprobs).abs().masked_select(batch.completion_mask);
    CHECK(diff.max().item<float>() < 1e-3);
  }
  // Both kinds of completion happened (seeded: the same every run).
  CHECK(with_code > 0);
  CHECK(with_code < 8);
  CHECK(count_text(dir + "/ev.log", "ok reward=") == static_cast<int>(codes.size()));
}

// A group the learner refuses as too stale is sampled again with the newer
// weights under a job of its own ("/r1"), and the state file keeps the
// count until the learner has the group, so that a restarted rollout sends
// it under that same job (the hub answers each job once). Before, the
// rollout dropped a refused group: the chaos test's last batch then waited
// for ever for a group that never came (seed 2306190446).
TEST_CASE("a group the learner refuses as stale is sampled again, under its own job, also after a restart") {
  test_hub hub("rollout-stale");
  const std::string &dir = hub.dir, &address = hub.address;
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  auto network = test_network(false);
  auto tok = test_tokenizer();
  auto learner = std::make_shared<learner_stand_in>();
  learner->stale_refusals = 1;
  publish_weights(*learner, *network, dir);
  auto learner_worker = serve_learner(sys, address, learner);

  rollout::rollout_options o;
  o.model = dir + "/published";
  o.tasks_dir = tasks;
  o.tasks = {"cpu/gelu_tanh"};
  o.platform = "CPU";
  o.group_size = 2;
  o.max_new_tokens = 2;
  o.exemplars = 0;
  o.settle_deadline = 240000ms;
  o.state_file = dir + "/rollout.state";
  o.weights_dir = dir + "/weights";
  auto run = [&](std::uint64_t groups, const std::string& name = "ro") {
    o.groups = groups;
    auto rt = bus::connect_peer_transport(address, name);
    REQUIRE(rt.ok());
    auto rollout = rollout::spawn_rollout(sys, o, policy::policy(network, tok), fast_peer(name),
                                          std::shared_ptr<bus::transport>(std::move(*rt)));
    REQUIRE_MESSAGE(rollout.ok(), (rollout.ok() ? std::string() : rollout.error().text()));
    CHECK_MESSAGE(stops_normally(sys, *rollout, 120s), "the rollout did not finish; hub log:\n" << read_text(dir + "/hub.log"));
  };
  auto group_ids = [&] {
    std::multiset<std::string> ids;
    std::lock_guard lock(learner->mu);
    for (const auto& payload : learner->groups) {
      auto env = messages::open(payload);
      REQUIRE(env.ok());
      ids.insert(std::string(str((*env)->payload_as_RolloutGroup()->group_id())));
    }
    return ids;
  };

  // Group 0, sampled with version 0, is refused; sampled again with version 1.
  run(2);
  {
    std::lock_guard lock(learner->mu);
    CHECK(std::multiset<std::string>(learner->group_jobs.begin(), learner->group_jobs.end()) ==
          std::multiset<std::string>{"group/ro/g0", "group/ro/g0/r1", "group/ro/g1"});
  }
  auto ids = group_ids();
  CHECK(ids.count("ro/g0-v1-r1") == 1);
  CHECK(ids.size() == 2);
  CHECK(read_text(o.state_file) == "2\n");

  // A rollout killed after group 2 was refused once resumes with its count:
  // the job it sends is the one its predecessor would have sent.
  std::ofstream(o.state_file) << "2\nresample 2 1\n";
  run(1);
  {
    std::lock_guard lock(learner->mu);
    CHECK(learner->group_jobs.back() == "group/ro/g2/r1");
    CHECK(learner->group_jobs.size() == 4);
  }
  CHECK(group_ids().size() == 3);
  CHECK(read_text(o.state_file) == "3\n");

  // Without learner_admission nothing fetches newer weights before the
  // resample: it is sampled at the same version, under new candidate ids
  // (the refused sampling's settle jobs are answered and acknowledged).
  {
    std::lock_guard lock(learner->mu);
    learner->stale_refusals = 1;
  }
  o.learner_admission = false;
  o.state_file = dir + "/ro2.state";
  run(1, "ro2");
  {
    std::lock_guard lock(learner->mu);
    CHECK(std::vector<std::string>(learner->group_jobs.end() - 2, learner->group_jobs.end()) ==
          std::vector<std::string>{"group/ro2/g0", "group/ro2/g0/r1"});
  }
  CHECK(group_ids().count("ro2/g0-v0-r1") == 1);
  CHECK(read_text(o.state_file) == "1\n");
  anon_send_exit(learner_worker, caf::exit_reason::user_shutdown);
}

// A device that fails every generation (here: options the sampler refuses)
// must stop the rollout with the reason, not leave it retrying in silence.
// Each retry asks the exemplar store under a fresh job id (the hub answers
// a reused one only with a failure that says job ids are single-use).
TEST_CASE("a rollout whose generations keep failing stops after three with the reason") {
  test_hub hub("rollout-failing");
  const std::string &dir = hub.dir, &config = hub.config, &address = hub.address;
  child exemplars(crucible_binary(),
                  {"exemplar", "--config", config, "--connect", address, "--name", "exemplar", "--db", dir + "/db"},
                  dir + "/exemplar.log");
  REQUIRE(wait_for_text(dir + "/exemplar.log", "registered with hub", 20s));

  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  rollout::rollout_options o;
  o.tasks_dir = tasks;
  o.tasks = {"cpu/gelu_tanh"};
  o.group_size = 2;
  o.max_new_tokens = 2;
  o.top_p = 0;  // generate refuses it
  o.learner_admission = false;
  o.exemplar_deadline = 60000ms;
  auto rt = bus::connect_peer_transport(address, "ro");
  REQUIRE(rt.ok());
  auto rollout = rollout::spawn_rollout(sys, o, policy::policy(test_network(), test_tokenizer()), fast_peer("ro"),
                                        std::shared_ptr<bus::transport>(std::move(*rt)));
  REQUIRE_MESSAGE(rollout.ok(), (rollout.ok() ? std::string() : rollout.error().text()));
  caf::scoped_actor self{sys};
  self->monitor(*rollout);
  std::string reason;
  self->receive([&](caf::down_msg& d) { reason = caf::to_string(d.reason); },
                caf::after(std::chrono::seconds(30)) >> [] {});
  CHECK_MESSAGE(reason.find("3 generations in a row failed") != std::string::npos, "down reason: " << reason);
  CHECK(reason.find("top_p") != std::string::npos);
}

// [rollout] batch_groups and slots: three groups sampled in one call on
// five slots (continuous batching over their twelve completions) are the
// groups a rollout sampling one group a call sends, sample for sample, and
// still go to the learner one at a time in order.
TEST_CASE("groups sampled together in one call, on fewer slots than completions, are the groups sampled one by one") {
  test_hub hub("rollout-batched");
  const std::string &dir = hub.dir, &config = hub.config, &address = hub.address;
  child evaluator(crucible_binary(),
                  {"evaluator", "--config", config, "--connect", address, "--name", "ev", "--tasks", tasks,
                   "--protocol", "quick"},
                  dir + "/ev.log");
  REQUIRE(wait_for_text(dir + "/ev.log", "registered with hub", 20s));

  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  auto learner = std::make_shared<learner_stand_in>();
  auto learner_worker = serve_learner(sys, address, learner, {"learner.group"});

  auto run = [&](const std::string& name, std::uint32_t batch_groups, std::uint32_t slots) {
    rollout::rollout_options o;
    o.tasks_dir = tasks;
    o.tasks = {"cpu/gelu_tanh", "cpu/scale_relu"};
    o.platform = "CPU";
    o.group_size = 4;
    o.max_new_tokens = 6;
    o.seed = 5;
    o.groups = 3;
    o.exemplars = 0;
    o.learner_admission = false;
    o.batch_groups = batch_groups;
    o.slots = slots;
    o.settle_deadline = 240000ms;
    auto registry = std::make_shared<prometheus::Registry>();
    auto rt = bus::connect_peer_transport(address, name);
    REQUIRE(rt.ok());
    auto rollout = rollout::spawn_rollout(sys, o, policy::policy(test_network(), test_tokenizer()), fast_peer(name),
                                          std::shared_ptr<bus::transport>(std::move(*rt)), registry);
    REQUIRE_MESSAGE(rollout.ok(), (rollout.ok() ? std::string() : rollout.error().text()));
    CHECK_MESSAGE(stops_normally(sys, *rollout, 300s),
                  name << " did not finish its three groups; hub log:\n" << read_text(dir + "/hub.log"));
    return metrics::counter_sum(registry, "crucible_rollout_generation_calls_total");
  };
  CHECK(run("solo", 1, 0) == 3);
  CHECK(run("batched", 3, 5) == 1);
  anon_send_exit(learner_worker, caf::exit_reason::user_shutdown);

  // By rollout, in the order the learner got them: group number -> samples.
  std::map<std::string, std::vector<learner::rollout_group>> by_rollout;
  {
    std::lock_guard lock(learner->mu);
    for (const auto& payload : learner->groups) {
      auto env = messages::open(payload);
      REQUIRE(env.ok());
      auto* wire = (*env)->payload_as_RolloutGroup();
      REQUIRE(wire);
      auto group = learner::group_from(*wire);
      REQUIRE(group.ok());
      by_rollout[std::string(str(wire->rollout()))].push_back(std::move(*group));
    }
  }
  REQUIRE(by_rollout["solo"].size() == 3);
  REQUIRE(by_rollout["batched"].size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    const auto& solo = by_rollout["solo"][k];
    const auto& batched = by_rollout["batched"][k];
    INFO("group " << k);
    CHECK(solo.group_id == "solo/g" + std::to_string(k) + "-v0");
    CHECK(batched.group_id == "batched/g" + std::to_string(k) + "-v0");
    CHECK(batched.task_id == solo.task_id);
    REQUIRE(batched.samples.size() == solo.samples.size());
    for (std::size_t i = 0; i < solo.samples.size(); ++i) {
      CHECK(batched.samples[i].prompt_ids == solo.samples[i].prompt_ids);
      CHECK(batched.samples[i].completion_ids == solo.samples[i].completion_ids);
      REQUIRE(batched.samples[i].behaviour_logprobs.size() == solo.samples[i].behaviour_logprobs.size());
      for (std::size_t t = 0; t < solo.samples[i].behaviour_logprobs.size(); ++t)
        CHECK(std::fabs(batched.samples[i].behaviour_logprobs[t] - solo.samples[i].behaviour_logprobs[t]) <= 1e-4);
    }
  }
}
