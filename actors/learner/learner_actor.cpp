#include "actors/learner/learner_actor.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <algorithm>
#include <random>
#include <utility>

#include "actors/learner/learner_metrics.hpp"
#include "actors/learner/learner_wire.hpp"
#include "actors/learner/sft_data.hpp"
#include "actors/learner/trainer.hpp"
#include "actors/learner/weight_publisher.hpp"
#include "actors/policy/lora_adapters.hpp"

namespace crucible::learner {

namespace fs = std::filesystem;

namespace {

// The trainer and what the actor publishes; lives on the actor's thread.
struct engine {
  learner_options options;
  std::unique_ptr<trainer> train;
  std::unique_ptr<weight_publisher> publisher;  // holds the latest version's safetensors bytes
  publication latest;
  publish_hook on_publish;
  std::unique_ptr<learner_metrics> metrics;  // null: metrics off
  bool checkpoint_failed = false;            // the last checkpoint due could not be written
};

policy::model_placement placement_of(const learner_options& o) {
  policy::model_placement p;
  p.device = o.device;
  // fp32 master weights under bf16 autocast on CUDA; the policy's default otherwise.
  if (o.device != "cpu" && o.bf16_autocast) p.compute_dtype = policy::dtype::f32;
  return p;
}

// Publishes the current weights (weight_publisher.hpp): at publish_dir/v-N
// when set, else in memory for chunks.
status publish(engine& e) {
  const auto started = std::chrono::steady_clock::now();
  auto p = e.publisher->publish(e.train->model(), e.train->version());
  if (!p) return p.error();
  e.latest = std::move(*p);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  spdlog::info("learner: published {} in {:.3f} s", e.latest.text(), seconds);
  if (e.metrics) e.metrics->record_publication(e.latest.version, seconds);
  if (e.on_publish)
    e.on_publish(e.latest, e.latest.chunks > 0 ? e.publisher->bytes() : std::span<const std::uint8_t>());
  return status::success();
}

weight_publisher_options publisher_options(const learner_options& o) {
  weight_publisher_options p;
  p.publish_dir = o.publish_dir;
  p.chunk_bytes = o.publish_chunk_bytes;
  p.base_model = o.policy;
  std::error_code ec;
  if (!o.policy.empty() && fs::exists(fs::path(o.policy) / "tokenizer.json", ec)) p.tokenizer_from = o.policy;
  return p;
}

// Every checkpoint_every versions. A checkpoint that cannot be written (a
// full disk) does not fail the step: the groups were trained into the
// policy in memory, which is all their answer says (a checkpoint was never
// their record: a learner killed between checkpoints resumes from the last
// one). It logs the error, and the next due version tries again.
void checkpoint_if_due(engine& e) {
  const auto& o = e.options;
  if (o.checkpoint_dir.empty() || o.checkpoint_every == 0 || e.train->version() % o.checkpoint_every != 0) return;
  auto saved = e.train->save_checkpoint(o.checkpoint_dir);
  if (!saved) {
    spdlog::error("learner: checkpoint of version {} failed, training goes on and version {} tries again: {}",
                  e.train->version(), e.train->version() + o.checkpoint_every, saved.error().text());
    e.checkpoint_failed = true;
  } else if (std::exchange(e.checkpoint_failed, false)) {
    spdlog::info("learner: checkpoints write again (version {} in {})", e.train->version(), o.checkpoint_dir);
  }
}

// Metrics, checkpoint and publication after a version.
status after_version(engine& e, const step_report& report) {
  if (!e.options.metrics_file.empty()) CRUCIBLE_TRY(append_metrics(e.options.metrics_file, report));
  spdlog::info("learner: {}", report.json());
  checkpoint_if_due(e);
  return publish(e);
}

result<std::unique_ptr<engine>> open_engine(const learner_options& options, publish_hook on_publish = {},
                                            metrics::registry_ptr metrics = {}) {
  if (options.policy.empty()) return make_error(errc::invalid_argument, "[learner] policy: no policy folder given");
  auto e = std::make_unique<engine>();
  e->options = options;
  e->publisher = std::make_unique<weight_publisher>(publisher_options(options));
  e->on_publish = std::move(on_publish);
  if (metrics) e->metrics = std::make_unique<learner_metrics>(std::move(metrics));
  const auto placement = placement_of(options);
  const bool resume = !options.checkpoint_dir.empty() && latest_checkpoint_weights(options.checkpoint_dir).ok();
  auto model = policy::load_causal_lm(options.policy, placement);
  if (!model) return model.error();
  std::shared_ptr<policy::causal_lm> reference;
  if (options.kl_beta > 0 && !options.reference.empty()) {
    auto r = policy::load_causal_lm(options.reference, placement);
    if (!r) return r.error();
    reference = *r;
    for (auto& p : reference->parameters()) p.set_requires_grad(false);
  }
  auto t = trainer::create(*model, reference, options);
  if (!t) return t.error();
  e->train = std::move(*t);
  if (resume) {
    CRUCIBLE_TRY(e->train->load_checkpoint(options.checkpoint_dir));
    spdlog::info("learner: resumed from {} at version {}", options.checkpoint_dir, e->train->version());
  }
  CRUCIBLE_TRY(publish(*e));
  return e;
}

struct learner_state {
  std::shared_ptr<engine> e;
  std::vector<std::pair<rollout_group, caf::typed_response_promise<learner_reply>>> pending;
  static inline const char* name = "learner";
};

using learner_pointer = learner_actor::stateful_pointer<learner_state>;

// Trains on the first groups_per_batch pending groups and answers them.
void train_pending(learner_pointer self) {
  auto& st = self->state;
  auto& e = *st.e;
  const auto batch_size = static_cast<std::size_t>(e.options.groups_per_batch);
  while (st.pending.size() >= batch_size) {
    std::vector<rollout_group> batch;
    std::vector<caf::typed_response_promise<learner_reply>> promises;
    for (std::size_t i = 0; i < batch_size; ++i) {
      batch.push_back(std::move(st.pending[i].first));
      promises.push_back(st.pending[i].second);
    }
    st.pending.erase(st.pending.begin(), st.pending.begin() + static_cast<std::ptrdiff_t>(batch_size));
    auto report = e.options.objective == stage::reinforce ? e.train->train_reinforce(batch) : e.train->train_grpo(batch);
    learner_reply reply;
    if (report) {
      for (const auto& g : batch) report->groups.push_back(g.group_id);
      e.train->gate().trained(report->groups, e.train->version());
    }
    if (report && e.metrics) e.metrics->record_step(*report, batch.size());
    if (!report) {
      reply.text = report.error().text();
    } else if (auto s = after_version(e, *report); !s) {
      reply.text = s.error().text();
    } else {
      reply.ok = true;
      reply.text = trained_text(e.train->version());
    }
    if (!reply.ok) spdlog::error("learner: {}", reply.text);
    for (auto& p : promises) p.deliver(reply);
  }
}

learner_actor::behavior_type learner_behavior(learner_pointer self, std::shared_ptr<engine> opened) {
  self->state.e = std::move(opened);
  return {
      [self](group_atom, const rollout_group& group) -> caf::result<learner_reply> {
        auto& e = *self->state.e;
        // Delivered again after a restart: trained already, into a checkpointed version.
        if (auto v = e.train->gate().trained_in(group.group_id)) return learner_reply{true, trained_text(*v), {}};
        if (auto s = e.train->gate().admit(group, e.train->version()); !s)
          return learner_reply{false, s.error().code == errc::unavailable ? stale_refusal(s.error().text())
                                                                          : s.error().text(), {}};
        e.train->gate().arrived(group.rollout, group.number);
        auto promise = self->make_response_promise<learner_reply>();
        self->state.pending.emplace_back(group, promise);
        train_pending(self);
        return promise;
      },
      [self](start_atom, const std::string& rollout, std::uint64_t number, std::uint64_t rollout_version) {
        return self->state.e->train->gate().try_start(rollout, number, rollout_version);
      },
      [self](latest_atom) { return self->state.e->latest; },
      [self](chunk_atom, std::uint64_t version, std::uint32_t index) -> learner_reply {
        const auto& e = *self->state.e;
        if (version != e.latest.version || e.latest.chunks == 0)
          return {false, "version " + std::to_string(version) + " is not the latest in chunks (latest: " + e.latest.text() + ")", {}};
        if (index >= e.latest.chunks) return {false, "chunk " + std::to_string(index) + " out of range", {}};
        auto part = chunk_of(e.publisher->bytes(), index, e.options.publish_chunk_bytes);
        return {true, {}, std::vector<std::uint8_t>(part.begin(), part.end())};
      },
  };
}

}  // namespace

result<publication> run_sft(const learner_options& options, std::uint64_t epochs) try {
  auto tok = policy::tokenizer::load(fs::path(options.policy) / "tokenizer.json");
  if (!tok) return tok.error();
  auto opened = open_engine(options);
  if (!opened) return opened.error();
  auto& e = **opened;
  const auto& eos = e.train->model().config().eos_token_ids;
  auto data = read_sft_jsonl(options.sft_data, *tok,
                             eos.empty() ? std::nullopt : std::optional<std::int32_t>(static_cast<std::int32_t>(eos[0])));
  if (!data) return data.error();
  if (data->empty()) return make_error(errc::invalid_argument, options.sft_data + ": no examples");
  const auto batch = static_cast<std::size_t>(options.groups_per_batch);
  for (std::uint64_t epoch = 0; epoch < epochs; ++epoch) {
    // Each epoch in its own order (seeded), so batches mix the file's tasks.
    std::shuffle(data->begin(), data->end(), std::mt19937_64(options.seed * 1000003 + epoch));
    for (std::size_t start = 0; start < data->size(); start += batch) {
      std::vector<sft_example> slice(data->begin() + static_cast<std::ptrdiff_t>(start),
                                     data->begin() + static_cast<std::ptrdiff_t>(std::min(data->size(), start + batch)));
      auto report = e.train->train_sft(slice);
      if (!report) return report.error();
      if (!options.metrics_file.empty()) CRUCIBLE_TRY(append_metrics(options.metrics_file, *report));
      spdlog::info("learner: sft epoch {} {}", epoch, report->json());
    }
  }
  if (!options.checkpoint_dir.empty()) CRUCIBLE_TRY(e.train->save_checkpoint(options.checkpoint_dir));
  CRUCIBLE_TRY(publish(e));
  if (e.train->model().adapters() && !options.publish_dir.empty()) {
    // LoRA: what stage 1 hands on is a whole policy, the adapters merged
    // into the base (publish_dir/v-N-merged), beside the adapters' v-N.
    policy::merge_adapters(e.train->model());
    const fs::path merged = fs::path(options.publish_dir) / ("v-" + std::to_string(e.latest.version) + "-merged");
    policy::save_options files;
    if (fs::exists(fs::path(options.policy) / "tokenizer.json")) files.tokenizer_from = fs::path(options.policy);
    CRUCIBLE_TRY(policy::save_causal_lm(e.train->model(), merged, files));
    e.latest.path = merged.string();
  }
  return e.latest;
} catch (const c10::Error& err) {
  return make_error(errc::internal, std::string("learner: LibTorch: ") + err.what_without_backtrace());
}

result<learner_actor> spawn_learner_actor(caf::actor_system& system, const learner_options& options,
                                          publish_hook on_publish, metrics::registry_ptr metrics) {
  try {
    auto e = open_engine(options, std::move(on_publish), std::move(metrics));
    if (!e) return e.error();
    return system.spawn<caf::detached>(learner_behavior, std::shared_ptr<engine>(std::move(*e)));
  } catch (const c10::Error& err) {
    return make_error(errc::internal, std::string("learner: LibTorch: ") + err.what_without_backtrace());
  }
}

}  // namespace crucible::learner
