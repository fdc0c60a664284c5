// `crucible exemplar`: the exemplar store as a service on the bus.
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/exemplar/exemplar_actor.hpp"
#include "actors/exemplar/exemplar_import.hpp"
#include "actors/exemplar/exemplar_wire.hpp"
#include "runtime/node/ask.hpp"
#include "runtime/node/worker_actor.hpp"
#include "runtime/roles/roles.hpp"
#include "runtime/roles/serve.hpp"
#include "storage/rocksdb_store.hpp"

namespace crucible::roles {

namespace {

using messages::envelope_writer;

// Jobs -> the exemplar actor -> job results.
class exemplar_handler final : public node::job_handler {
 public:
  exemplar_handler(caf::actor_system& sys, exemplar::exemplar_actor actor, std::string name)
      : sys_(sys), actor_(std::move(actor)), name_(std::move(name)) {}

  void run(const bus::worker_session::job_request& job, done_fn done) override {
    auto env = messages::open(job.payload);
    if (!env) return done(msg::JobStatus::Failed, {}, job.kind + " payload: " + env.error().message);
    if (job.kind == "exemplar.sample") {
      auto* q = (*env)->payload_as_ExemplarQuery();
      if (!q) return done(msg::JobStatus::Failed, {}, "exemplar.sample needs an ExemplarQuery");
      auto fail = [done](const caf::error& e) { done(msg::JobStatus::Failed, {}, caf::to_string(e)); };
      node::ask<exemplar::exemplar_answer>(
          sys_, actor_,
          [done, name = name_](exemplar::exemplar_answer& a) {
            envelope_writer w;
            auto answer = exemplar::build_answer(w.fbb(), a);
            done(msg::JobStatus::Ok, w.finish(answer, name, a.task_id), {});
          },
          fail, exemplar::sample_atom::value, exemplar::query_from(*q));
      return;
    }
    if (job.kind == "exemplar.insert") {
      auto* s = (*env)->payload_as_Settlement();
      if (!s) return done(msg::JobStatus::Failed, {}, "exemplar.insert needs a Settlement");
      node::ask<exemplar::settle_reply>(
          sys_, actor_,
          [done](exemplar::settle_reply& r) {
            if (r.outcome == exemplar::settle_outcome::failed) return done(msg::JobStatus::Failed, {}, r.reason);
            std::string outcome = exemplar::to_string(r.outcome);
            done(msg::JobStatus::Ok, bus::bytes(outcome.begin(), outcome.end()), {});
          },
          [done](const caf::error& e) { done(msg::JobStatus::Failed, {}, caf::to_string(e)); },
          exemplar::settle_atom::value, exemplar::settlement_from(*s));
      return;
    }
    done(msg::JobStatus::Failed, {}, "the exemplar role does not serve jobs of kind '" + job.kind + "'");
  }

 private:
  caf::actor_system& sys_;
  exemplar::exemplar_actor actor_;
  std::string name_;
};

struct exemplar_args {
  role_args common;
  exemplar_service_options service;
  std::uint32_t slots = 16;
};

}  // namespace

result<service> spawn_exemplar_service(caf::actor_system& sys, const exemplar_service_options& o,
                                       const std::string& name) {
  exemplar::exemplar_options options;
  if (o.temperature > 0) options.temperature = o.temperature;
  if (o.bucket_width > 0) options.bucket_width = o.bucket_width;
  if (!o.selector.empty()) {
    auto k = exemplar::parse_selector_kind(o.selector);
    if (!k) return k.error();
    options.selector = *k;
  }
  if (!o.scale.empty()) {
    auto sc = exemplar::parse_bucket_scale(o.scale);
    if (!sc) return sc.error();
    options.scale = *sc;
  }
  CRUCIBLE_TRY(exemplar::validate(options));
  auto kv = storage::open_rocksdb(o.db_dir);
  if (!kv) return kv.error();
  auto store = exemplar::exemplar_store::open(std::shared_ptr<storage::kv_store>(std::move(*kv)), options);
  if (!store) return store.error();
  std::string seeded;
  if (!o.seed_files.empty()) {
    std::optional<exemplar::cuda_l1_import> cuda_l1;
    if (!o.seed_settled.empty()) {
      auto settled = exemplar::read_settled_results(o.seed_settled);
      if (!settled) return settled.error();
      cuda_l1 = exemplar::cuda_l1_import{std::move(*settled), o.seed_tasks_dir};
    }
    auto batch = exemplar::read_exemplar_files(o.seed_files, cuda_l1 ? &*cuda_l1 : nullptr);
    if (!batch) return batch.error();
    auto summary = exemplar::insert_exemplars(**store, *batch);
    if (!summary) return summary.error();
    seeded = fmt::format("; seeded from {}: {}", fmt::join(o.seed_files, ", "), exemplar::to_string(*summary));
  }
  auto events = std::make_shared<node::event_outbox>();
  auto on_buckets = [events, name](exemplar::bucket_report r) {
    envelope_writer w;
    auto buckets = exemplar::build_buckets(w.fbb(), r);
    events->publish(std::string(messages::kind_name(msg::Payload::ExemplarBuckets)), w.finish(buckets, name, r.task_id));
  };
  auto actor = exemplar::spawn_exemplar_actor(sys, std::move(*store), options, on_buckets);
  service svc{std::make_shared<exemplar_handler>(sys, actor, name),
              {"exemplar.sample", "exemplar.insert"},
              caf::actor_cast<caf::actor>(actor),
              fmt::format("exemplar store {} (selector {}, temperature {}, bucket width {}){}", o.db_dir,
                          exemplar::to_string(options.selector), options.temperature, options.bucket_width, seeded)};
  svc.events = std::move(events);
  return svc;
}

cli::command add_exemplar_role(CLI::App& app) {
  auto a = std::make_shared<exemplar_args>();
  auto* cmd = app.add_subcommand("exemplar", "Run the exemplar store as a service on the bus: samples contrastive "
                                             "exemplars (exemplar.sample jobs) and stores clean successes "
                                             "(exemplar.insert jobs)");
  cmd->add_option("--db", a->service.db_dir, "RocksDB directory of the store (default ./exemplars)");
  cmd->add_option("--selector", a->service.selector, "bucket (the paper's Equation 1), uniform or island");
  cmd->add_option("--temperature", a->service.temperature, "default temperature of Equation 1 (1.0)");
  cmd->add_option("--bucket-width", a->service.bucket_width, "bucket width (0.1)");
  cmd->add_option("--scale", a->service.scale, "linear or log buckets");
  cmd->add_option("--slots", a->slots, "requests served at once (16)");
  cmd->add_option("--seed", a->service.seed_files,
                  "import this file before serving (exemplar rows or CUDA-L1's release; repeatable)");
  cmd->add_option("--seed-settled", a->service.seed_settled,
                  "the evaluator's results that seeded CUDA-L1 rows take their rewards from (repeatable)");
  cmd->add_option("--seed-tasks-dir", a->service.seed_tasks_dir,
                  "the KernelBench folder seeded CUDA-L1 rows' tasks are named after (the rollouts' tasks_dir)");
  add_role_options(*cmd, a->common, "exemplar");
  return {cmd, [a] {
            return serve("exemplar", msg::Role::Exemplar, a->slots, a->common,
                         [a](caf::actor_system& sys, const std::string& name, const metrics::registry_ptr&) {
                           return spawn_exemplar_service(sys, a->service, name);
                         });
          }};
}

}  // namespace crucible::roles
