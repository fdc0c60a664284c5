// `crucible run` job "loop": the main job (design sections 1, 2 and 7).
//
//   0. The initial policy: [run] policy, initialised at random (seed) when
//      the folder holds a config and a tokenizer but no weights.
//   1. Stage 1: SFT on [run] sft_data with the [sft] section's learner
//      options; the result is DIR/stage1/v-N (DIR/stage1.json records it, so
//      a resumed run skips the stage).
//   2. Stage 3: the hub with its referee, evaluators, exemplar store and
//      detectors (run_stack.hpp), the learner ([learner]: checkpoints in
//      DIR/checkpoints, versions in DIR/versions, metrics in
//      DIR/metrics.jsonl) and [run] rollouts rollout actors ([rollout]; each
//      keeps its next group in DIR/rollout-I.state) until they have started
//      [run] groups groups between them, a time limit or a signal.
//   3. The summary from the referee's ledger: mean settled reward and
//      success rate of the first and last fifth of the groups; summary.json
//      and report.html in DIR.
//
// A run killed at any point continues with `--resume DIR`: the hub's and
// the referee's ledgers, the exemplar store, the learner's checkpoint and
// the rollouts' state files are all in DIR.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include "actors/learner/learner_actor.hpp"
#include "actors/learner/learner_config.hpp"
#include "actors/learner/learner_role.hpp"
#include "actors/policy/policy.hpp"
#include "actors/rollout/rollout_actor.hpp"
#include "actors/rollout/rollout_options.hpp"
#include "runtime/base/compute_tuning.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/cli/run_jobs.hpp"
#include "runtime/cli/run_report.hpp"
#include "runtime/cli/run_stack.hpp"
#include "runtime/metrics/read_back.hpp"
#include "runtime/cli/run_summary.hpp"
#include "runtime/config/runtime_options.hpp"
#include "runtime/log/log.hpp"
#include "runtime/node/caf_types.hpp"

namespace crucible::cli {

namespace {
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

constexpr double exemplar_bucket_width = 0.1;  // the exemplar store's default (roles::exemplar_service_options)

std::vector<nlohmann::json> read_jsonl(const fs::path& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (auto j = nlohmann::json::parse(line, nullptr, false); !j.is_discarded()) out.push_back(std::move(j));
  return out;
}

bool has_weights(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "model.safetensors", ec) || fs::exists(dir / "model.safetensors.index.json", ec);
}

// Step 0: the folder the run starts from.
result<fs::path> initial_policy(const run_options& run, const fs::path& dir) {
  if (has_weights(run.policy)) return fs::path(run.policy);
  const fs::path out = dir / "policy-init";
  if (has_weights(out)) return out;
  auto p = policy::policy::initialize(run.policy, run.seed);
  if (!p) return p.error();
  CRUCIBLE_TRY(p->save(out));
  std::printf("policy: %s, initialised at random (seed %llu) from %s\n", p->text().c_str(),
              static_cast<unsigned long long>(run.seed), run.policy.c_str());
  return out;
}

// Step 1: stage 1, or the folder an earlier run of it left.
result<fs::path> stage_one(const run_options& run, learner::learner_options sft, const fs::path& start,
                           const fs::path& dir) {
  const fs::path record = dir / "stage1.json";
  if (fs::exists(record)) {
    auto j = read_jsonl(record);
    if (!j.empty() && j[0].contains("policy") && has_weights(j[0]["policy"].get<std::string>())) {
      std::printf("stage 1: done earlier (%s)\n", j[0]["policy"].get<std::string>().c_str());
      return fs::path(j[0]["policy"].get<std::string>());
    }
  }
  sft.objective = learner::stage::sft;
  sft.policy = start.string();
  sft.sft_data = run.sft_data;
  sft.publish_dir = (dir / "stage1").string();
  sft.checkpoint_dir.clear();
  sft.metrics_file = (dir / "sft-metrics.jsonl").string();
  std::error_code ec;
  fs::remove(sft.metrics_file, ec);
  // Stage 1 runs alone, before any actor: every core may serve its matmuls.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  set_blas_threads(cores);
  std::printf("stage 1: supervised fine-tuning on %s, %llu epochs...\n", run.sft_data.c_str(),
              static_cast<unsigned long long>(run.sft_epochs));
  std::fflush(stdout);
  const auto started = clock_type::now();
  auto pub = learner::run_sft(sft, run.sft_epochs);
  set_blas_threads(1);
  if (!pub) return pub.error();
  auto steps = read_jsonl(sft.metrics_file);
  const double seconds = std::chrono::duration<double>(clock_type::now() - started).count();
  nlohmann::json r = {{"policy", pub->path}, {"steps", steps.size()}, {"seconds", seconds}};
  if (!steps.empty()) r["first_loss"] = steps.front().value("loss", 0.0), r["last_loss"] = steps.back().value("loss", 0.0);
  std::ofstream(record) << r.dump() << "\n";
  std::printf("stage 1: %zu steps in %.0f s, loss %.3f -> %.3f\n", steps.size(), seconds, r.value("first_loss", 0.0),
              r.value("last_loss", 0.0));
  return fs::path(pub->path);
}

std::uint64_t read_number(const fs::path& file) {
  std::ifstream in(file);
  std::uint64_t n = 0;
  in >> n;
  return n;
}

// Live figures, from the ledger and the learner's metrics.
struct progress {
  std::size_t groups = 0, samples = 0, successes = 0;
  double reward_sum = 0;
  std::size_t versions = 0;
  double evaluator_busy = -1;  // share of the evaluators' time spent evaluating; < 0: none yet
};

// The evaluators' busy share since stage 3 began: the seconds their
// finished evaluations took (crucible_evaluator_busy_seconds_total, all of
// this process's evaluators) over evaluators x elapsed seconds. An
// evaluation still running is not counted yet, so the share lags by at
// most one evaluation per evaluator. Issue 22: below 1, the rollouts do
// not keep the evaluators fed.
double evaluator_busy(const metrics::registry_ptr& registry, std::size_t evaluators, double elapsed_s) {
  if (evaluators == 0 || elapsed_s <= 0) return -1;
  return metrics::counter_sum(registry, "crucible_evaluator_busy_seconds_total") /
         (static_cast<double>(evaluators) * elapsed_s);
}

progress measure(referee::candidate_ledger& ledger, const fs::path& metrics) {
  progress p;
  if (auto rows = read_settlements(ledger, "rollout-")) {
    p.groups = groups_of(*rows).size();
    for (const auto& r : *rows) {
      ++p.samples;
      p.successes += r.status == "Success";
      p.reward_sum += r.reward;
    }
  }
  p.versions = read_jsonl(metrics).size();
  return p;
}

void print_progress(const progress& p, std::uint64_t target, double elapsed_s, bool tty) {
  std::string bar;
  if (target > 0) {
    const std::size_t width = 24, filled = std::min<std::size_t>(width, p.groups * width / target);
    bar = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] ";
  }
  const double n = static_cast<double>(std::max<std::size_t>(p.samples, 1));
  const std::string busy = p.evaluator_busy >= 0 ? fmt::format(" | evaluators busy {:.2f}", p.evaluator_busy) : "";
  std::string line = fmt::format("stage 3: {}groups {}{} | samples {} | success {:.2f} | mean reward {:.2f} | learner "
                                 "v{}{} | {:.0f} s",
                                 bar, p.groups, target ? fmt::format("/{}", target) : "", p.samples,
                                 static_cast<double>(p.successes) / n, p.reward_sum / n, p.versions, busy, elapsed_s);
  if (tty)
    std::printf("\r%-110s", line.c_str());
  else
    std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace

int run_loop(const config::file& file, const run_options& run, const std::string& dir_text, bool resume,
             const metrics::registry_ptr& endpoint_registry) {
  // The roles record their metrics even without an endpoint: the progress
  // line reads the evaluators' busy seconds back from this registry.
  const metrics::registry_ptr registry = endpoint_registry ? endpoint_registry : std::make_shared<prometheus::Registry>();
  const fs::path dir(dir_text);
  learner::learner_options sft, lo;
  rollout::rollout_options ro;
  if (auto s = config::read(file.get("sft"), sft); !s) return fail(s.error());
  if (auto s = config::read(file.get("learner"), lo); !s) return fail(s.error());
  if (auto s = rollout::read(file.get("rollout"), ro); !s) return fail(s.error());
  if (lo.objective == learner::stage::sft)
    return fail("[learner] objective must be grpo or reinforce in job \"loop\" (stage 1 is [run] sft_data with [sft])");
  if (ro.temperature != lo.temperature)
    return fail(fmt::format("[rollout] temperature {} differs from [learner] temperature {}: the learner's "
                            "log-probs must be those the rollouts sampled from",
                            ro.temperature, lo.temperature));
  if (ro.max_staleness != lo.max_staleness)
    return fail(fmt::format("[rollout] max_staleness {} differs from [learner] max_staleness {}", ro.max_staleness,
                            lo.max_staleness));
  if (!resume && fs::exists(dir / "hub-ledger"))
    return fail("run folder " + dir.string() + " holds a run already: continue it with --resume " + dir.string());
  std::printf("crucible run: %s (%s)\n", dir.c_str(), resume ? "resumed" : "new");

  auto start = initial_policy(run, dir);
  if (!start) return fail(start.error());
  fs::path policy_dir = *start;
  if (!run.sft_data.empty()) {
    auto s1 = stage_one(run, sft, policy_dir, dir);
    if (!s1) return fail(s1.error());
    policy_dir = *s1;
  }

  policy::set_compute_threads(1);
  install_signal_handlers();
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  auto stack_or = run_stack::start(sys, file, run, dir.string(), registry);
  if (!stack_or) return fail(stack_or.error());
  auto& stack = **stack_or;

  lo.policy = policy_dir.string();
  lo.checkpoint_dir = (dir / "checkpoints").string();
  lo.publish_dir = (dir / "versions").string();
  lo.metrics_file = (dir / "metrics.jsonl").string();
  if (auto s = stack.host("learner", msg::Role::Learner, static_cast<std::uint32_t>(lo.groups_per_batch + 4),
                          learner::spawn_learner_service(sys, lo, stack.address(), stack.bus_settings(), "learner",
                                                         stack.metrics()));
      !s)
    return fail(s.error());

  caf::scoped_actor self{sys};
  std::size_t running = 0;
  const std::uint64_t per_rollout = run.groups ? (run.groups + run.rollouts - 1) / run.rollouts : 0;
  for (std::uint32_t i = 0; i < run.rollouts; ++i) {
    auto o = ro;
    const std::string name = "rollout-" + std::to_string(i);
    o.model = policy_dir.string();
    o.policy_version = 0;
    o.state_file = (dir / (name + ".state")).string();
    o.seed = ro.seed + 1000003ull * i;
    const std::uint64_t done = read_number(o.state_file);
    if (per_rollout && done >= per_rollout) continue;
    o.groups = per_rollout ? per_rollout - done : 0;
    policy::model_placement placement;
    placement.device = o.device;
    auto p = policy::policy::load(o.model, placement);
    if (!p) return fail(p.error());
    bus::peer_options peer = stack.bus_settings();
    peer.name = name;
    peer.node = logging::host_name();
    peer.role = msg::Role::Rollout;
    auto t = stack.connect(name);
    if (!t) return fail(t.error());
    auto actor = rollout::spawn_rollout(sys, o, std::move(*p), peer, *t, stack.metrics());
    if (!actor) return fail(actor.error());
    self->monitor(*actor);
    stack.adopt(*actor);
    ++running;
  }
  const std::size_t evaluators = run.devices.empty() ? run.evaluators : run.devices.size();
  std::printf("stage 3: %s; %u rollout(s) (%s), %zu evaluator(s) (protocol %s)\n", lo.policy.c_str(), run.rollouts,
              rollout::describe(ro).c_str(), evaluators, run.protocol.c_str());
  std::fflush(stdout);

  referee::candidate_ledger ledger(stack.store());
  const auto started = clock_type::now();
  const bool tty = isatty(STDOUT_FILENO);
  auto last_print = clock_type::now() - std::chrono::hours(1);
  auto last_check = clock_type::now();
  int code = 0;
  bool stopped_by_limit = false;
  while (running > 0 && code == 0) {
    self->receive(
        [&](caf::down_msg& d) {
          --running;
          if (d.reason != caf::exit_reason::normal) {
            spdlog::critical("a rollout stopped: {}", caf::to_string(d.reason));
            std::fprintf(stderr, "\ncrucible run: a rollout stopped: %s\n", caf::to_string(d.reason).c_str());
            code = 1;
          }
        },
        caf::after(std::chrono::milliseconds(500)) >> [] {});
    const double elapsed = std::chrono::duration<double>(clock_type::now() - started).count();
    if (shutdown_requested()) {
      code = 130;
      break;
    }
    if (run.time_limit_s > 0 && elapsed >= run.time_limit_s) {
      stopped_by_limit = true;
      break;
    }
    if (clock_type::now() - last_print >= std::chrono::seconds(tty ? 2 : 15)) {
      auto p = measure(ledger, lo.metrics_file);
      p.evaluator_busy = evaluator_busy(registry, evaluators, elapsed);
      print_progress(p, run.groups, elapsed, tty);
      last_print = clock_type::now();
    }
    // Stage 3 is done once the learner has trained [run] groups groups, even
    // while a rollout still waits: after a resume, a group sampled again may
    // be one more than the target, and it waits for a batch partner that no
    // rollout will sample (loop_test's resume case hung so, 4 times in 4,
    // once evaluations got fast enough for a rollout to finish its groups
    // before the kill).
    if (run.groups > 0 && clock_type::now() - last_check >= std::chrono::seconds(1)) {
      last_check = clock_type::now();
      if (read_jsonl(lo.metrics_file).size() * lo.groups_per_batch >= run.groups) break;
    }
  }
  const double elapsed = std::chrono::duration<double>(clock_type::now() - started).count();
  const double busy = evaluator_busy(registry, evaluators, elapsed);
  if (tty) std::printf("\n");
  stack.stop();

  // The summary, from the ledger: each settled candidate once.
  auto rows = read_settlements(ledger, "rollout-");
  if (!rows) return fail(rows.error());
  auto groups = groups_of(*rows);
  const std::size_t fifth = std::max<std::size_t>(1, groups.size() / 5);
  auto first = span_of(groups, 0, fifth);
  auto last = span_of(groups, groups.size() > fifth ? groups.size() - fifth : 0, fifth);
  auto metrics = read_jsonl(lo.metrics_file);
  auto span_json = [](const group_span& s) {
    return nlohmann::json{{"groups", s.groups}, {"samples", s.samples}, {"mean_reward", s.mean_reward},
                          {"success_rate", s.success_rate}};
  };
  std::map<std::string, std::size_t> by_status;
  std::size_t reused = 0;  // candidates that took an identical one's measurement
  for (const auto& r : *rows) {
    ++by_status[r.status];
    reused += !r.measurement_of.empty();
  }
  // Learned: the last fifth beats the first on both figures (a policy that
  // does not change moves one of them by chance as often as not).
  const bool learned =
      groups.size() >= 2 && last.mean_reward > first.mean_reward && last.success_rate > first.success_rate;
  nlohmann::json summary = {{"run_dir", dir.string()},
                            {"groups", groups.size()},
                            {"samples", rows->size()},
                            {"settlements", by_status},
                            {"measurements_reused", reused},
                            {"first_fifth", span_json(first)},
                            {"last_fifth", span_json(last)},
                            {"learned", learned},
                            {"versions", metrics.size()},
                            {"elapsed_s", elapsed},
                            {"stopped_by_time_limit", stopped_by_limit},
                            {"tasks_dir", fs::absolute(run.tasks_dir).string()}};
  if (busy >= 0) summary["evaluator_busy_fraction"] = busy;
  if (elapsed > 0) summary["groups_per_hour_this_session"] = static_cast<double>(groups.size()) * 3600.0 / elapsed;
  if (groups.size() >= 2) {
    const double span_s = static_cast<double>(groups.back().settled_ns - groups.front().started_ns) / 1e9;
    if (span_s > 0) summary["groups_per_hour"] = static_cast<double>(groups.size()) * 3600.0 / span_s;
  }
  {
    std::ofstream out(dir / "settlements.jsonl", std::ios::trunc);
    for (const auto& r : *rows) out << settlement_line(r).dump() << "\n";
  }
  std::ofstream(dir / "summary.json") << summary.dump(2) << "\n";
  if (auto s = write_report((dir / "report.html").string(), *rows, metrics, summary, exemplar_bucket_width); !s)
    spdlog::error("{}", s.error().text());

  std::string counts;
  for (auto& [status, n] : by_status) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, status);
  std::printf("\n%zu groups, %zu samples settled (%s; %zu took an identical candidate's measurement); learner at "
              "version %zu\n",
              groups.size(), rows->size(), counts.empty() ? "none" : counts.c_str(), reused, metrics.size());
  std::printf("first fifth (%zu groups): mean settled reward %.3f, success rate %.3f\n", first.groups,
              first.mean_reward, first.success_rate);
  std::printf("last fifth  (%zu groups): mean settled reward %.3f, success rate %.3f\n", last.groups, last.mean_reward,
              last.success_rate);
  std::printf("%s\nrun folder %s (report.html, summary.json, metrics.jsonl, settlements.jsonl)\n",
              learned ? "the last fifth beats the first in reward and success rate: the policy learned"
                      : "the last fifth does not beat the first in both reward and success rate",
              dir.c_str());
  if (code == 130) std::printf("stopped by a signal: continue with --resume %s\n", dir.c_str());
  return code == 130 ? 0 : code;
}

}  // namespace crucible::cli
