#include "actors/detector/detector_role.hpp"

#include <fmt/format.h>

#include "actors/detector/detector_actor.hpp"
#include "actors/detector/detector_wire.hpp"
#include "actors/detector/judge_detector.hpp"
#include "actors/detector/static_detector.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/node/ask.hpp"
#include "runtime/roles/serve.hpp"

namespace crucible::detector {

namespace {

// Jobs "detect:NAME" -> the detector actor -> Verdict results.
class detector_handler final : public node::job_handler {
 public:
  detector_handler(caf::actor_system& sys, detector_actor actor, std::string name)
      : sys_(sys), actor_(std::move(actor)), name_(std::move(name)) {}

  void run(const bus::worker_session::job_request& job, done_fn done) override {
    if (job.kind != detect_job_kind(name_))
      return done(msg::JobStatus::Failed, {}, fmt::format("detector {} does not serve jobs of kind '{}'", name_, job.kind));
    auto env = messages::open(job.payload);
    if (!env) return done(msg::JobStatus::Failed, {}, job.kind + " payload: " + env.error().message);
    auto* request = (*env)->payload_as_DetectRequest();
    if (!request) return done(msg::JobStatus::Failed, {}, job.kind + " needs a DetectRequest payload");
    node::ask<verdict>(
        sys_, actor_,
        [done, name = name_](verdict& v) { done(msg::JobStatus::Ok, encode_verdict(v, name), {}); },
        [done](const caf::error& e) { done(msg::JobStatus::Failed, {}, caf::to_string(e)); }, examine_atom::value,
        input_from(*request));
  }

 private:
  caf::actor_system& sys_;
  detector_actor actor_;
  std::string name_;
};

result<std::unique_ptr<detector>> make_detector(const detector_options& o) {
  if (o.kind == detector_kind::judge) {
    std::function<result<std::vector<storage::similar_hack>>(const std::string&, std::size_t)> hacks;
    if (!o.judge.hacks_db.empty()) hacks = hacks_from_directory(o.judge.hacks_db);
    return std::unique_ptr<detector>(std::make_unique<judge_detector>(o.judge, std::move(hacks)));
  }
  auto rules = load_rules(o.rules);
  if (!rules) return rules.error();
  auto d = static_detector::create(std::move(*rules), o.rules);
  if (!d) return d.error();
  return std::unique_ptr<detector>(std::move(*d));
}

struct detector_args {
  roles::role_args common;
  detector_options options;
  std::string kind;
  bool required = false;
  std::uint32_t deadline_ms = 0;
  std::uint32_t slots = 0;
};

}  // namespace

result<roles::service> spawn_detector_service(caf::actor_system& sys, const detector_options& o) {
  CRUCIBLE_TRY(validate(o));
  auto impl = make_detector(o);
  if (!impl) return impl.error();
  std::string description = fmt::format("detector {} ({}, deadline {} ms): {}", o.name,
                                        o.required ? "required" : "advisory", o.deadline_ms, (*impl)->describe());
  auto actor = spawn_detector_actor(sys, std::move(*impl), o.name, o.required);
  roles::service svc{std::make_shared<detector_handler>(sys, actor, o.name), {detect_job_kind(o.name)},
                     caf::actor_cast<caf::actor>(actor), description};
  svc.required = o.required;
  svc.deadline_ms = o.deadline_ms;
  return svc;
}

cli::command add_detector_role(CLI::App& app) {
  auto a = std::make_shared<detector_args>();
  auto* cmd = app.add_subcommand("detector", "Run a reward-hack detector that votes on candidates (jobs detect:NAME)");
  cmd->add_option("--kind", a->kind, "static (regex rules) or judge (an OpenAI-compatible model)");
  cmd->add_flag("--required", a->required, "the referee waits for this detector's verdict (default: advisory)");
  cmd->add_option("--deadline-ms", a->deadline_ms, "how long the referee waits for a verdict (60000)");
  cmd->add_option("--slots", a->slots, "candidates examined at once (1)");
  cmd->add_option("--rules", a->options.rules, "rule file of a static detector (configs/detectors/static.toml)");
  roles::add_role_options(*cmd, a->common, "detector");
  return {cmd, [a] {
            // [detector] from the config, then the flags on top.
            auto file = cli::load_config(a->common.config);
            if (!file) return 2;
            detector_options o = a->options;
            std::string rules_flag = a->options.rules;
            if (auto s = read(file->get("detector"), o); !s) return cli::fail(s.error());
            if (rules_flag != detector_options{}.rules) o.rules = rules_flag;
            if (!a->kind.empty()) {
              auto k = parse_detector_kind(a->kind);
              if (!k) return cli::fail(k.error());
              o.kind = *k;
            }
            if (a->required) o.required = true;
            if (a->deadline_ms) o.deadline_ms = a->deadline_ms;
            if (a->slots) o.slots = a->slots;
            if (!a->common.name.empty()) o.name = a->common.name;
            if (o.name.empty()) o.name = to_string(o.kind);
            roles::role_args common = a->common;
            common.name = o.name;
            return roles::serve("detector", msg::Role::Detector, o.slots, common,
                                [o](caf::actor_system& sys, const std::string&, const metrics::registry_ptr&) {
                                  return spawn_detector_service(sys, o);
                                });
          }};
}

}  // namespace crucible::detector
