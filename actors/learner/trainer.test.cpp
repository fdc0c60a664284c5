// The trainer end to end on CPU: GRPO learns a synthetic task from real
// sampled rollouts (fresh and stale), REINFORCE and SFT move the policy the
// right way, a resumed run repeats an uninterrupted one, bad batches are
// refused.
// LibTorch first: glog defines a CHECK that doctest's must replace.
#include "actors/learner/learner_test_support.hpp"

#include <doctest/doctest.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <deque>
#include <fstream>
#include <map>

#include "actors/policy/test_support.hpp"
#include "tests/support/small_fs.hpp"
#include "runtime/base/error_text.hpp"

extern char** environ;

namespace crucible::learner {
namespace {

using namespace testing;

struct run_result {
  double first_reward = 0, best_reward = 0;
  int steps = 0;
};

// Trains GRPO on the target task until the mean sampled reward passes 0.8 or
// `max_steps` batches; rollouts are sampled by the policy `lag` versions old.
run_result learn_target(const learner_options& options, int lag, int max_steps) {
  torch::set_num_threads(1);
  auto model = tiny_policy(11);
  auto t = trainer::create(model, nullptr, options);
  REQUIRE_MESSAGE(t.ok(), crucible::error_text(t));
  std::deque<std::shared_ptr<policy::causal_lm>> history{frozen_copy(*model)};  // history.back() = version now
  run_result r;
  for (int step = 0; step < max_steps; ++step) {
    const std::size_t back = std::min<std::size_t>(static_cast<std::size_t>(lag), history.size() - 1);
    const auto version = (*t)->version() - back;
    auto& sampler = *history[history.size() - 1 - back];
    auto groups = sample_groups(sampler, version, static_cast<std::uint64_t>(step) + 1);
    const double reward = mean_reward(groups);
    if (step == 0) r.first_reward = reward;
    r.best_reward = std::max(r.best_reward, reward);
    r.steps = step;
    if (reward > 0.8) break;
    auto report = (*t)->train_grpo(groups);
    REQUIRE_MESSAGE(report.ok(), crucible::error_text(report));
    CHECK(report->staleness.at(back) == 4);
    history.push_back(frozen_copy(*model));
    if (history.size() > 4) history.pop_front();
  }
  return r;
}

TEST_CASE("GRPO raises the share of target tokens from under 0.1 to over 0.8 on a tiny policy") {
  auto r = learn_target(tiny_options(), 0, 40);
  MESSAGE("fresh rollouts: reward " << r.first_reward << " -> " << r.best_reward << " in " << r.steps << " steps");
  CHECK(r.first_reward < 0.1);
  CHECK(r.best_reward > 0.8);
}

TEST_CASE("GRPO still converges when every group comes from the policy two versions old (max_staleness 2)") {
  auto o = tiny_options();
  o.max_staleness = 2;
  auto r = learn_target(o, 2, 40);
  MESSAGE("stale rollouts: reward " << r.first_reward << " -> " << r.best_reward << " in " << r.steps << " steps");
  CHECK(r.first_reward < 0.1);
  CHECK(r.best_reward > 0.8);
}

TEST_CASE("a group staler than max_staleness is refused and the policy is left alone") {
  auto model = tiny_policy(3);
  auto o = tiny_options();
  o.max_staleness = 0;
  auto t = trainer::create(model, nullptr, o);
  REQUIRE(t.ok());
  auto groups = sample_groups(*model, 0, 1);
  REQUIRE((*t)->train_grpo(groups).ok());
  auto before = model->named_parameters()["model.embed_tokens.weight"].clone();
  auto stale = (*t)->train_grpo(groups);  // still version 0, learner at 1
  REQUIRE_FALSE(stale.ok());
  CHECK(stale.error().code == errc::unavailable);
  CHECK((*t)->version() == 1);
  CHECK(torch::equal(before, model->named_parameters()["model.embed_tokens.weight"]));
}

TEST_CASE("bad batches are refused naming the group and sample") {
  auto model = tiny_policy(3);
  auto t = trainer::create(model, nullptr, tiny_options());
  REQUIRE(t.ok());
  auto groups = sample_groups(*model, 0, 1, 1, 2, 4);
  auto short_logprobs = groups;
  short_logprobs[0].samples[1].behaviour_logprobs.pop_back();
  auto e = (*t)->train_grpo(short_logprobs);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().message.find("sample 1") != std::string::npos);
  auto bad_id = groups;
  bad_id[0].samples[0].completion_ids[0] = kVocab;
  CHECK((*t)->train_grpo(bad_id).error().message.find("outside the vocabulary") != std::string::npos);
  CHECK_FALSE((*t)->train_grpo({}).ok());
  CHECK_FALSE((*t)->train_sft({{{1, 2}, {}}}).ok());
}

TEST_CASE("SFT raises the likelihood of the completions it is shown, with gradient accumulation") {
  auto model = tiny_policy(5);
  auto o = tiny_options();
  o.objective = stage::sft;
  o.micro_batches = 2;
  auto t = trainer::create(model, nullptr, o);
  REQUIRE(t.ok());
  std::vector<sft_example> batch{{{1, 2, 3}, {4, 5, 6}}, {{3, 2}, {9, 9, 9, 9}}, {{8}, {1}}, {{2, 2}, {3, 3}}};
  const double before = logprob_of(*model, {3, 2}, {9, 9, 9, 9});
  double first_loss = 0, last_loss = 0;
  for (int i = 0; i < 10; ++i) {
    auto r = (*t)->train_sft(batch);
    REQUIRE_MESSAGE(r.ok(), crucible::error_text(r));
    (i == 0 ? first_loss : last_loss) = r->loss;
  }
  CHECK(last_loss < first_loss);
  CHECK(logprob_of(*model, {3, 2}, {9, 9, 9, 9}) > before + 1.0);
}

TEST_CASE("success-only REINFORCE pulls up successes and ignores failures") {
  auto model = tiny_policy(5);
  auto o = tiny_options();
  o.objective = stage::reinforce;
  o.learning_rate = 3e-3;
  auto t = trainer::create(model, nullptr, o);
  REQUIRE(t.ok());
  rollout_group g;
  g.group_id = "g";
  g.samples = {{{1, 2}, {4, 4, 4}, {0, 0, 0}, {}, 1.0}, {{1, 2}, {5, 5, 5}, {0, 0, 0}, {}, 0.0}};
  const double win = logprob_of(*model, {1, 2}, {4, 4, 4}), lose = logprob_of(*model, {1, 2}, {5, 5, 5});
  for (int i = 0; i < 5; ++i) {
    g.policy_version = (*t)->version();
    REQUIRE((*t)->train_reinforce({g}).ok());
  }
  CHECK(logprob_of(*model, {1, 2}, {4, 4, 4}) > win + 0.5);
  CHECK(logprob_of(*model, {1, 2}, {5, 5, 5}) < lose);  // only through shared weights, never pulled up
  // A batch with no success changes nothing and takes no version.
  g.samples[0].reward = 0;
  g.policy_version = (*t)->version();
  auto none = (*t)->train_reinforce({g});
  REQUIRE(none.ok());
  CHECK(none->sequences == 0);
  CHECK((*t)->version() == 5);
}

TEST_CASE("a run stopped and resumed from its checkpoint in a new trainer repeats the uninterrupted losses") {
  torch::set_num_threads(1);
  policy::testing::scratch_dir dir;
  auto o = tiny_options();
  o.kl_beta = 0.05;
  o.mini_batches = 2;
  o.warmup_steps = 2;
  o.total_steps = 20;

  auto whole_model = tiny_policy(21);
  auto whole = trainer::create(whole_model, nullptr, o);
  REQUIRE(whole.ok());
  auto all = grpo_steps(**whole, 0, 6);

  auto first_model = tiny_policy(21);
  auto first = trainer::create(first_model, nullptr, o);
  REQUIRE(first.ok());
  grpo_steps(**first, 0, 3);
  REQUIRE((*first)->save_checkpoint(dir.path()).ok());
  grpo_steps(**first, 3, 4);  // work after the checkpoint is lost with the process
  first->reset();

  auto weights = latest_checkpoint_weights(dir.path());
  REQUIRE(weights.ok());
  auto loaded = policy::load_causal_lm(*weights, {"cpu", policy::dtype::f32});
  REQUIRE(loaded.ok());
  torch::manual_seed(12345);  // the checkpoint's RNG state must win over this
  auto resumed = trainer::create(*loaded, nullptr, o);
  REQUIRE(resumed.ok());
  auto s = (*resumed)->load_checkpoint(dir.path());
  REQUIRE_MESSAGE(s.ok(), crucible::error_text(s));
  CHECK((*resumed)->version() == 3);
  CHECK((*resumed)->optimizer_steps() == 6);
  CHECK((*resumed)->rewards().size() == 64);  // 3 batches of 32 rewards in a window of 64
  auto rest = grpo_steps(**resumed, 3, 6);
  for (int i = 0; i < 3; ++i) {
    INFO("step " << 3 + i);
    CHECK(rest[static_cast<std::size_t>(i)] == all[static_cast<std::size_t>(3 + i)]);
  }
}

// A checkpoint on a full disk (a small tmpfs of its own): "" when it behaves,
// else what went wrong. Runs in a forked child (below): only a
// single-threaded process may enter the user namespace small_fs needs, and
// this binary's libraries start threads when they load.
std::string checkpoint_on_full_disk() {
  auto fs = crucible::testing::small_fs::make("checkpoints", 8u << 20);
  if (!fs) return "no small file system of the test's own: " + crucible::testing::small_fs::why();
  torch::set_num_threads(1);
  const std::filesystem::path dir = fs->path() + "/checkpoints";
  auto o = tiny_options();
  o.kl_beta = 0.05;
  auto t = trainer::create(tiny_policy(31), nullptr, o);
  if (!t) return t.error().text();
  grpo_steps(**t, 0, 1);
  if (auto s = (*t)->save_checkpoint(dir); !s) return "first checkpoint: " + s.error().text();
  const std::string first = policy::testing::read_file(dir / "latest");
  grpo_steps(**t, 1, 2);

  fs->fill();
  auto failed = (*t)->save_checkpoint(dir);
  if (failed.ok()) return "a checkpoint on a full disk succeeded";
  const std::string why = failed.error().text();
  if (failed.error().code != errc::io || why.find(dir.string() + "/step-") == std::string::npos ||
      why.find("No space left on device") == std::string::npos)
    return "the error does not name the file and the reason: " + why;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".tmp") return "left behind: " + entry.path().string();
  if (policy::testing::read_file(dir / "latest") != first) return "latest changed on the full disk";
  fs->release();

  if (auto s = (*t)->save_checkpoint(dir); !s) return "after space returned: " + s.error().text();
  if (policy::testing::read_file(dir / "latest") == first) return "latest did not move after space returned";
  auto resumed = trainer::create(tiny_policy(31), nullptr, o);
  if (!resumed) return resumed.error().text();
  if (auto s = (*resumed)->load_checkpoint(dir); !s) return "loading the new checkpoint: " + s.error().text();
  if ((*resumed)->version() != (*t)->version()) return "the new checkpoint holds another version";
  return {};
}

TEST_CASE("a checkpoint on a full disk fails naming the file and the reason, leaves no temporary folder and the previous checkpoint, and writes again when space returns") {
  int out[2];
  REQUIRE(::pipe(out) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(out[0]);
    const std::string why = checkpoint_on_full_disk();
    if (!why.empty()) (void)!::write(out[1], why.data(), why.size());
    ::_exit(why.empty() ? 0 : 1);
  }
  ::close(out[1]);
  std::string why;
  char buf[512];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) why.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0), "status " << status << ": " << why);
}

// Runs learner_resume_probe to completion; returns its wait status.
int run_resume_probe(std::vector<std::string> args) {
  const std::string exe = std::string(CRUCIBLE_BINARY_DIR) + "/bin/learner_resume_probe";
  args.insert(args.begin(), exe);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  REQUIRE(::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv.data(), environ) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return status;
}

std::map<std::uint64_t, double> losses_in(const std::filesystem::path& file) {
  std::map<std::uint64_t, double> out;
  std::ifstream in(file);
  std::uint64_t version = 0;
  std::string loss;
  while (in >> version >> loss) out[version] = std::strtod(loss.c_str(), nullptr);
  return out;
}

TEST_CASE("a learner process killed with SIGKILL mid-step and restarted resumes with the uninterrupted losses") {
  policy::testing::scratch_dir dir;
  const int whole = run_resume_probe({(dir / "ckpt-whole").string(), (dir / "whole.txt").string(), "6"});
  REQUIRE(WIFEXITED(whole));
  REQUIRE(WEXITSTATUS(whole) == 0);
  // Killed after training version 4 (from 3), before its checkpoint.
  const int killed = run_resume_probe({(dir / "ckpt").string(), (dir / "resumed.txt").string(), "6", "2"});
  REQUIRE(WIFSIGNALED(killed));
  CHECK(WTERMSIG(killed) == SIGKILL);
  CHECK(losses_in(dir / "resumed.txt").size() == 3);
  const int restarted = run_resume_probe({(dir / "ckpt").string(), (dir / "resumed.txt").string(), "6"});
  REQUIRE(WIFEXITED(restarted));
  REQUIRE(WEXITSTATUS(restarted) == 0);
  const auto want = losses_in(dir / "whole.txt"), got = losses_in(dir / "resumed.txt");
  REQUIRE(want.size() == 6);
  REQUIRE(got.size() == 6);
  for (std::uint64_t v = 0; v < 6; ++v) {
    INFO("version " << v);
    CHECK(got.at(v) == want.at(v));
  }
}

}  // namespace
}  // namespace crucible::learner
