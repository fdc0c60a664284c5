#include "actors/rollout/rollout_command.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "actors/rollout/prompt.hpp"
#include "actors/rollout/rollout_actor.hpp"
#include "actors/rollout/task_schedule.hpp"
#include "runtime/bus/zmq_transport.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/config/runtime_options.hpp"
#include "runtime/log/log.hpp"
#include "runtime/node/caf_types.hpp"

namespace crucible::rollout {

namespace {

struct rollout_args {
  std::string config, connect, name, model, log_level, print_prompt, keys, metrics;
  std::vector<std::string> exemplars;  // SCORE:FILE
  std::int64_t groups = -1;
};

// The prompt of a group on task_id with these previous codes ("SCORE:FILE",
// the code as the exemplar store holds it: the file's text).
int print_prompt(const rollout_options& o, const std::string& task_id, const std::vector<std::string>& exemplars) {
  auto tasks = load_tasks(o.tasks_dir, {task_id});
  if (!tasks) return cli::fail(tasks.error());
  auto t = prompt_template::load_or_builtin(o.prompt_template);
  if (!t) return cli::fail(t.error());
  std::vector<prompt_exemplar> shown;
  for (const auto& e : exemplars) {
    const auto colon = e.find(':');
    prompt_exemplar x;
    try {
      x.score = std::stod(e.substr(0, colon));
    } catch (const std::exception&) {
      return cli::fail("--exemplar '" + e + "': expected SCORE:FILE, e.g. 1.25:faster.py");
    }
    std::ifstream in(e.substr(colon + 1));
    if (colon == std::string::npos || !in) return cli::fail("--exemplar '" + e + "': cannot read the file after ':'");
    std::stringstream code;
    code << in.rdbuf();
    x.code = code.str();
    shown.push_back(std::move(x));
  }
  const auto& task = tasks->front();
  std::fputs(t->render({task.id, task_description(task.code), task.code, o.platform, std::move(shown)}).c_str(), stdout);
  return 0;
}

// Runs until a signal, a failure, or the rollout's last group (exit 0).
int wait_for_rollout(caf::actor_system& sys, const caf::actor& rollout) {
  caf::scoped_actor self{sys};
  self->monitor(rollout);
  int code = -1;
  while (code < 0) {
    self->receive(
        [&](caf::down_msg& d) {
          if (d.reason == caf::exit_reason::normal) {
            code = 0;
            return;
          }
          spdlog::critical("the rollout stopped: {}; the process exits", caf::to_string(d.reason));
          code = 1;
        },
        caf::after(std::chrono::milliseconds(100)) >> [&] {
          if (cli::shutdown_requested()) code = 0;
        });
  }
  self->send_exit(rollout, caf::exit_reason::user_shutdown);
  return code;
}

int run_rollout(const rollout_args& a) {
  auto file = cli::load_config(a.config);
  if (!file) return 2;
  logging::log_options log;
  bus::peer_options peer;
  rollout_options options;
  std::string connect = "tcp://127.0.0.1:5555";
  if (auto s = config::read(file->get("log"), log); !s) return cli::fail(s.error());
  if (auto s = config::read(file->get("bus"), peer, connect); !s) return cli::fail(s.error());
  if (auto s = read(file->get("rollout"), options); !s) return cli::fail(s.error());
  if (!a.connect.empty()) connect = a.connect;
  if (!a.name.empty()) peer.name = a.name;
  if (!a.keys.empty()) peer.keys = a.keys;
  if (!a.model.empty()) options.model = a.model;
  if (a.groups >= 0) options.groups = static_cast<std::uint64_t>(a.groups);
  if (!a.log_level.empty()) log.level = a.log_level;
  if (!a.print_prompt.empty()) return print_prompt(options, a.print_prompt, a.exemplars);
  if (options.model.empty()) return cli::fail("rollout: no policy: give --model DIR or [rollout] model");
  if (peer.name.empty()) peer.name = cli::default_name("rollout");
  peer.node = logging::host_name();
  if (auto s = logging::init("rollout", peer.node, log); !s) return cli::fail(s.error());
  auto metrics = cli::open_metrics(*file, a.metrics);
  if (!metrics) return cli::fail(metrics.error());

  policy::model_placement placement;
  placement.device = options.device;
  auto policy = policy::policy::load(options.model, placement);
  if (!policy) return cli::fail(policy.error());
  auto transport = bus::connect_peer_transport(connect, peer.name, {.keys = peer.keys});
  if (!transport) return cli::fail(transport.error());

  cli::install_signal_handlers();
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  spdlog::info("rollout {}: policy {} at version {}; {}", peer.name, policy->text(), options.policy_version,
               describe(options));
  auto actor = spawn_rollout(sys, options, std::move(*policy), peer, std::shared_ptr<bus::transport>(std::move(*transport)),
                             *metrics ? (*metrics)->registry() : nullptr);
  if (!actor) return cli::fail(actor.error());
  return wait_for_rollout(sys, *actor);
}

}  // namespace

cli::command add_rollout_command(CLI::App& app) {
  auto a = std::make_shared<rollout_args>();
  auto* cmd = app.add_subcommand("rollout", "Run a rollout: sample groups of kernels with the policy, have them "
                                            "settled by the referee, send them to the learner");
  cmd->add_option("--config", a->config, "TOML config ([log], [bus], [rollout], [metrics]; docs/configuration.md)");
  cmd->add_option("--connect", a->connect, "hub address, e.g. tcp://HOST:5555")->envname("CRUCIBLE_CONNECT");
  cmd->add_option("--model", a->model, "Hugging Face folder of the policy (else [rollout] model)");
  cmd->add_option("--name", a->name, "unique name on the bus (default rollout-HOST-PID); candidate ids start with it");
  cmd->add_option("--keys", a->keys, "CURVE key folder of this node (crucible keys generate; [bus] keys); none: plain")->envname("CRUCIBLE_KEYS");
  cmd->add_option("--groups", a->groups, "stop after this many groups (else [rollout] groups; 0: never)");
  cmd->add_option("--print-prompt", a->print_prompt, "print the prompt of a group on this task id and exit");
  cmd->add_option("--exemplar", a->exemplars, "with --print-prompt: a previous code SCORE:FILE (repeatable)");
  cmd->add_option("--log-level", a->log_level, "trace, debug, info, warn, error");
  cli::add_metrics_option(*cmd, a->metrics);
  return {cmd, [a] { return run_rollout(*a); }};
}

}  // namespace crucible::rollout
