#include "actors/rollout/rollout_actor.hpp"

#include <charconv>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/learner/learner_wire.hpp"
#include "actors/learner/publication.hpp"
#include "actors/policy/chat_template.hpp"
#include "actors/policy/lora.hpp"
#include "actors/rollout/extract.hpp"
#include "actors/rollout/rollout_metrics.hpp"
#include "actors/rollout/rollout_progress.hpp"
#include "actors/rollout/rollout_wire.hpp"
#include "actors/rollout/task_schedule.hpp"
#include "actors/rollout/weights_folder.hpp"
#include "messages/domain_generated.h"
#include "runtime/node/caf_types.hpp"
#include "runtime/node/client_actor.hpp"
#include "runtime/node/pending_target.hpp"

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(crucible::bus::client_session::job_result)

namespace crucible::rollout {

namespace {

using job_result = bus::client_session::job_result;
using next_atom = caf::atom_constant<caf::atom("next")>;
using exemplars_atom = caf::atom_constant<caf::atom("exemplars")>;
using settled_atom = caf::atom_constant<caf::atom("settled")>;
using learned_atom = caf::atom_constant<caf::atom("learned")>;
using deadline_atom = caf::atom_constant<caf::atom("deadline")>;  // of a group's settlements
using exdeadline_atom = caf::atom_constant<caf::atom("exdeadline")>;  // of a group's exemplars
using latest_atom = caf::atom_constant<caf::atom("latest")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using chunk_atom = caf::atom_constant<caf::atom("chunk")>;
using early_atom = caf::atom_constant<caf::atom("early")>;
constexpr auto staleness_poll = std::chrono::milliseconds(500);
constexpr std::uint32_t chunk_window = 4;  // learner.chunk requests out at once
constexpr std::uint32_t max_generation_failures = 3;  // in a row: the device or the weights are broken

// A group sampled together with an earlier one ([rollout] batch_groups):
// while asking for exemplars, then waiting in rollout_state::ahead.
struct batched_group {
  std::uint64_t number = 0;
  const task_entry* task = nullptr;
  std::string id;            // "ROLLOUT/gN-vV"
  std::string exemplar_job;  // "" without exemplars
  std::optional<std::vector<prompt_exemplar>> exemplars;  // once answered (or given up on)
  std::vector<policy::generation> generations;            // once sampled
};

// The group being prepared, sampled or settled (one at a time).
struct group_run {
  enum class phase { exemplars, settling } at = phase::exemplars;
  std::uint64_t number = 0;
  const task_entry* task = nullptr;
  std::string id;                        // "ROLLOUT/gN-vV"
  std::string exemplar_job;              // "exemplars/ID", then "/retryN" after failed generations
  std::optional<std::vector<prompt_exemplar>> exemplars;  // once answered (or given up on)
  std::vector<batched_group> with;       // the groups sampled in the same call, while asking for exemplars
  std::vector<settled_sample> samples;   // one per completion, in order
  std::vector<bool> settled;
  std::size_t open = 0;                  // settle jobs without a result
  std::vector<std::string> job_ids;      // to acknowledge once the learner has the group
};

struct rollout_state {
  rollout_options options;
  std::optional<policy::policy> policy;
  std::uint64_t version = 0;           // of the weights in use
  std::uint64_t latest_published = 0;  // the learner's newest version heard of
  std::optional<task_schedule> schedule;
  std::optional<prompt_template> prompt;
  policy::chat_format chat;  // the model folder's chat template (if used) and generation_config stop ids
  node::hub_client client;
  std::string self_name;
  std::uint64_t next_group = 0, first_group = 0;
  // Groups the learner refused as too stale, to be sampled again before
  // next_group, and how many times each was (rollout_progress).
  std::set<std::uint64_t> redo;
  std::map<std::uint64_t, std::uint32_t> resamples;
  std::optional<group_run> group;
  // Groups sampled with an earlier one, by number, at this version: begun
  // in their turn without a generation of their own; new weights drop them.
  std::map<std::uint64_t, batched_group> ahead;
  struct at_learner_group {
    std::uint64_t number;
    std::uint64_t version;             // the group was sampled with
    std::vector<std::string> job_ids;  // to acknowledge once the learner has it
  };
  std::map<std::string, at_learner_group> at_learner;  // by learner job id
  std::map<std::string, job_result> early;  // results a previous incarnation's jobs got, by job id
  std::optional<learner::weight_assembler> incoming;          // chunks of a newer version
  std::uint32_t next_chunk = 0;     // the next chunk of `incoming` to ask for
  std::uint32_t chunks_out = 0;     // chunk requests without a result
  bool asking = false;              // a learner.latest, learner.start or chunk request is out
  std::string nonce;                // makes this incarnation's request ids unique
  std::uint64_t requests = 0;
  std::optional<std::pair<std::uint64_t, std::filesystem::path>> ready;  // weights to switch to
  bool waiting_logged = false;
  std::uint32_t generation_failures = 0;  // in a row; the rollout stops at max_generation_failures
  rollout_counters n;
  std::unique_ptr<rollout_metrics> metrics;  // null: metrics off
  static inline const char* name = "rollout";
};

using rollout_actor_t = caf::stateful_actor<rollout_state>;

std::string counters_text(const rollout_state& st) {
  const auto& n = st.n;
  return fmt::format("rollout {} at version {} (learner {}): {} groups sent ({} samples), {} without code, {} "
                     "unsettled at the deadline, {} weight switches, {} staleness waits, {} groups sampled again "
                     "after a stale refusal, {} groups at the learner",
                     st.self_name, st.version, st.latest_published, n.groups_sent, n.samples_sent, n.no_code, n.unsettled,
                     n.weight_switches, n.staleness_waits, n.resampled, st.at_learner.size());
}

// The group sampled next: a refused one first, else the next new one.
std::uint64_t next_number(const rollout_state& st) {
  return st.redo.empty() ? st.next_group : *st.redo.begin();
}

// Writes where a restart resumes: the oldest group the learner does not
// have yet (the current one, one at the learner, one to sample again).
// Resample counts of groups before it are done with and forgotten.
void save_progress(rollout_state& st) {
  std::uint64_t next = st.group ? std::min(st.group->number, next_number(st)) : next_number(st);
  for (const auto& [id, pending] : st.at_learner) next = std::min(next, pending.number);
  std::erase_if(st.resamples, [next](const auto& r) { return r.first < next; });
  if (st.options.state_file.empty()) return;
  rollout_progress p{next, st.resamples};
  if (auto saved = write_progress(st.options.state_file, p); !saved)
    spdlog::error("rollout {}: {}", st.self_name, saved.error().text());
}

// Submits a job unless a previous incarnation already has its result, which
// is then delivered at once.
void submit(rollout_actor_t* self, const std::string& id, const std::string& kind, bytes payload, caf::atom_value tag) {
  auto& st = self->state;
  auto me = caf::actor_cast<caf::actor>(self);
  if (auto it = st.early.find(id); it != st.early.end()) {
    caf::anon_send(me, caf::make_message(tag, it->second));
    st.early.erase(it);
    return;
  }
  st.client.submit(id, kind, std::move(payload),
                   [me, tag](const job_result& r) { caf::anon_send(me, caf::make_message(tag, r)); });
}

// FNV-1a of a completion's text. It ends each candidate id, so that an id
// names one completion: a restarted rollout whose group comes out different
// (the exemplar store grew since) submits new ids instead of being answered
// with the settlements of other code.
std::uint64_t text_hash(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The number of the group a job of this rollout belongs to ("KIND/NAME/gN-vV..."),
// or nothing for a request that belongs to no group (learner.latest, start, chunk).
std::optional<std::uint64_t> group_of(std::string_view job, std::string_view self_name) {
  auto at = job.find(fmt::format("/{}/g", self_name));
  if (at == std::string_view::npos) return std::nullopt;
  std::uint64_t n = 0;
  auto digits = job.substr(at + self_name.size() + 3);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end == digits.data()) return std::nullopt;
  return n;
}

// Acknowledges what a previous incarnation got for groups up to `number`: no
// later group of this incarnation can use it. Results of later groups wait,
// since this incarnation may sample those groups again under the same ids
// (the hub answers an acknowledged id only with a failure).
void drop_early_through(rollout_state& st, std::uint64_t number) {
  for (auto it = st.early.begin(); it != st.early.end();) {
    auto group = group_of(it->first, st.self_name);
    if (group && *group > number) {
      ++it;
      continue;
    }
    st.client.acknowledge(it->first);
    it = st.early.erase(it);
  }
}

// The handler's tag when this incarnation has submitted `job` and waits for
// its result: the current group's exemplars or settlements, or a group at
// the learner.
std::optional<caf::atom_value> waiting_for(const rollout_state& st, const std::string& job) {
  if (st.at_learner.count(job)) return learned_atom::value;
  const auto& g = st.group;
  if (!g) return std::nullopt;
  if (g->at == group_run::phase::exemplars) {
    if (job == g->exemplar_job) return exemplars_atom::value;
    for (const auto& b : g->with)
      if (job == b.exemplar_job) return exemplars_atom::value;
    return std::nullopt;
  }
  for (std::size_t i = 0; i < g->samples.size(); ++i)
    if (!g->settled[i] && job == "settle/" + g->samples[i].candidate_id) return settled_atom::value;
  return std::nullopt;
}

void acknowledge(rollout_state& st, const std::vector<std::string>& ids) {
  for (const auto& id : ids) st.client.acknowledge(id);
}

// Groups sampled ahead with older weights are sampled again with the new.
void drop_ahead(rollout_state& st) {
  for (const auto& [number, b] : st.ahead)
    if (!b.exemplar_job.empty()) st.client.acknowledge(b.exemplar_job);
  st.ahead.clear();
}

// Switches to announced weights when they are ready; only between groups.
void switch_weights(rollout_actor_t* self) {
  auto& st = self->state;
  if (!st.ready || st.group) return;
  auto [version, dir] = *st.ready;
  st.ready.reset();
  if (version <= st.version) return;
  drop_ahead(st);
  if (policy::is_adapter_folder(dir) && st.policy) {
    // LoRA: the published adapters onto the frozen base this rollout holds.
    if (auto s = st.policy->load_adapters(dir); !s) {
      spdlog::error("rollout {}: cannot apply the adapters of version {} from {}: {}", st.self_name, version,
                    dir.string(), s.error().text());
      return;
    }
    spdlog::info("rollout {}: switched from version {} to {} (adapters {})", st.self_name, st.version, version,
                 dir.string());
    st.version = version;
    ++st.n.weight_switches;
    if (st.metrics) st.metrics->record_version(version);
    return;
  }
  policy::model_placement placement;
  placement.device = st.options.device;
  auto loaded = policy::policy::load(dir, placement);
  if (!loaded) {
    spdlog::error("rollout {}: cannot load version {} from {}: {}", st.self_name, version, dir.string(),
                  loaded.error().text());
    return;
  }
  st.policy = std::move(*loaded);
  spdlog::info("rollout {}: switched from version {} to {} ({})", st.self_name, st.version, version, dir.string());
  st.version = version;
  ++st.n.weight_switches;
  if (st.metrics) st.metrics->record_version(version);
}

void sample_groups(rollout_actor_t* self);
void submit_samples(rollout_actor_t* self, std::vector<policy::generation> gens);

void begin_group(rollout_actor_t* self);
void ask_latest(rollout_actor_t* self);

// Called whenever something may let the next group start.
void start_group(rollout_actor_t* self) {
  auto& st = self->state;
  if (st.group || st.asking) return;
  const auto& o = st.options;
  if (o.groups > 0 && st.next_group - st.first_group >= o.groups && st.redo.empty()) {
    if (st.at_learner.empty()) {
      spdlog::info("{}", counters_text(st));
      self->quit();
    }
    return;
  }
  if (st.at_learner.size() >= o.max_pending_groups) return;  // a learner result calls again
  if (o.learner_admission) return ask_latest(self);
  begin_group(self);
}

std::string request_id(rollout_state& st, const char* what) {
  return fmt::format("{}/{}/{}/{}", what, st.self_name, st.nonce, st.requests++);
}
bytes text_bytes(const std::string& s) { return bytes(s.begin(), s.end()); }

// Waits a moment, then tries again (the learner said wait, or failed).
void retry_later(rollout_actor_t* self) {
  self->state.asking = false;
  self->delayed_send(self, staleness_poll, next_atom::value);
}

void ask_start(rollout_actor_t* self) {
  auto& st = self->state;
  if (st.latest_published > st.version + st.options.max_staleness) {
    if (!st.waiting_logged)
      spdlog::info("rollout {}: version {} is more than {} behind the learner's {}: waiting for new weights",
                   st.self_name, st.version, st.options.max_staleness, st.latest_published);
    st.waiting_logged = true;
    ++st.n.staleness_waits;
    return retry_later(self);
  }
  st.waiting_logged = false;
  st.asking = true;
  // The group's number keys the learner's place for it: a restart that asks
  // again for the same group takes the same place (admission.hpp).
  submit(self, request_id(st, "start"), "learner.start",
         text_bytes(learner::start_text({st.version, next_number(st), st.self_name})), start_atom::value);
}

void ask_latest(rollout_actor_t* self) {
  auto& st = self->state;
  st.asking = true;
  submit(self, request_id(st, "latest"), "learner.latest", {}, latest_atom::value);
}

// Asks for the next chunks of `incoming`, at most chunk_window at a time.
void ask_chunks(rollout_actor_t* self) {
  auto& st = self->state;
  const auto& p = st.incoming->announced();
  for (; st.chunks_out < chunk_window && st.next_chunk < p.chunks; ++st.chunks_out, ++st.next_chunk)
    submit(self, request_id(st, "chunk"), "learner.chunk",
           text_bytes(fmt::format("{} {}", p.version, st.next_chunk)), chunk_atom::value);
}

// How many times group `number` was sampled again after stale refusals.
std::uint32_t resamples_of(const rollout_state& st, std::uint64_t number) {
  auto times = st.resamples.find(number);
  return times == st.resamples.end() ? 0 : times->second;
}

// "ROLLOUT/gN-vV", and "-rK" for the K-th resample after a stale refusal:
// its candidates' ids (the group id and the completion) then differ from the
// refused sampling's even at the same version (without learner_admission
// nothing fetches newer weights first), whose settle jobs are answered.
std::string group_id(const rollout_state& st, std::uint64_t number) {
  const auto times = resamples_of(st, number);
  if (times == 0) return fmt::format("{}/g{}-v{}", st.self_name, number, st.version);
  return fmt::format("{}/g{}-v{}-r{}", st.self_name, number, st.version, times);
}

void begin_group(rollout_actor_t* self) {
  auto& st = self->state;
  const auto& o = st.options;
  group_run g;
  // A group sampled again is sampled alone; the groups sampled ahead wait.
  const bool again = !st.redo.empty();
  g.number = next_number(st);
  st.redo.erase(g.number);
  g.task = &st.schedule->pick(g.number);
  g.id = group_id(st, g.number);
  st.group = std::move(g);
  if (auto it = st.ahead.find(st.group->number); it != st.ahead.end()) {
    // Sampled with an earlier group at this version: its turn has come.
    auto gens = std::move(it->second.generations);
    if (!it->second.exemplar_job.empty()) st.group->job_ids.push_back(it->second.exemplar_job);
    st.ahead.erase(it);
    return submit_samples(self, std::move(gens));
  }
  if (!again) drop_ahead(st);
  // The groups sampled in the same call: the next numbers, within [rollout] groups.
  for (std::uint64_t number = st.group->number + 1; !again && number < st.group->number + o.batch_groups; ++number) {
    if (o.groups > 0 && number - st.first_group >= o.groups) break;
    batched_group b;
    b.number = number;
    b.task = &st.schedule->pick(number);
    b.id = group_id(st, number);
    st.group->with.push_back(std::move(b));
  }
  if (o.exemplars == 0) {
    st.group->exemplars.emplace();
    for (auto& b : st.group->with) b.exemplars.emplace();
    return sample_groups(self);
  }
  // Job ids are single-use at the hub: a group retried after a failed
  // generation asks for its exemplars under a new one.
  auto ask = [&](const std::string& id, const task_entry& task, std::uint64_t number) {
    std::string job = "exemplars/" + id;
    if (st.generation_failures > 0) job += fmt::format("/retry{}", st.generation_failures);
    std::uint64_t query_seed = (o.seed + 1) * 1000003 + number;
    submit(self, job, "exemplar.sample",
           exemplar_query_envelope(task.id, o.exemplars, o.exemplar_temperature, query_seed, st.self_name),
           exemplars_atom::value);
    return job;
  };
  st.group->exemplar_job = ask(st.group->id, *st.group->task, st.group->number);
  st.group->job_ids.push_back(st.group->exemplar_job);
  for (auto& b : st.group->with) b.exemplar_job = ask(b.id, *b.task, b.number);
  self->delayed_send(self, o.exemplar_deadline, exdeadline_atom::value, st.group->number);
}

policy::generation_options generation_of(const rollout_options& o, const policy::chat_format& chat,
                                         std::uint64_t group_number) {
  policy::generation_options g;
  g.eos_token_ids = chat.stop_token_ids;  // generation_config.json's, else config.json's (nullopt)
  g.max_new_tokens = o.max_new_tokens;
  g.sampling.temperature = o.temperature;
  g.sampling.top_p = o.top_p;
  g.sampling.top_k = static_cast<std::int64_t>(o.top_k);
  g.sampling.seed = (o.seed + group_number) * o.group_size;
  g.slots = o.slots;
  return g;
}

// Samples the current group and those batched with it in one generation
// call, once every exemplar answer is in (or given up on); the current
// group goes on to the referee, the others wait in st.ahead for their turn.
void sample_groups(rollout_actor_t* self) {
  auto& st = self->state;
  auto& g = *st.group;
  const auto& o = st.options;
  std::vector<std::vector<std::int32_t>> prompts;
  auto add = [&](const task_entry& task, std::vector<prompt_exemplar> exemplars) -> status {
    prompt_fields f{task.id, task_description(task.code), task.code, o.platform, std::move(exemplars)};
    auto ids = policy::encode_prompt(st.policy->tok(), st.chat.chat ? &*st.chat.chat : nullptr, o.system_prompt,
                                     st.prompt->render(f));
    if (!ids) return ids.error();
    prompts.insert(prompts.end(), o.group_size, *ids);
    return {};
  };
  status made = add(*g.task, std::move(*g.exemplars));
  for (auto& b : g.with)
    if (made) made = add(*b.task, std::move(*b.exemplars));
  const auto started = std::chrono::steady_clock::now();
  // Consecutive numbers: group n + k's sample i draws with seed
  // (seed + n) * G + k * G + i, its own seed as when sampled alone.
  auto gens = made ? st.policy->generate(prompts, generation_of(o, st.chat, g.number))
                  : result<std::vector<policy::generation>>(made.error());
  if (!gens) {
    spdlog::error("rollout {}: generating group {} failed: {}", st.self_name, g.id, gens.error().text());
    acknowledge(st, g.job_ids);
    for (const auto& b : g.with)
      if (!b.exemplar_job.empty()) st.client.acknowledge(b.exemplar_job);
    st.group.reset();
    if (++st.generation_failures >= max_generation_failures) {
      // `crucible run` hears the reason and stops, instead of a rollout
      // that retries forever on a broken device.
      self->quit(caf::make_error(caf::sec::runtime_error,
                                 fmt::format("rollout {}: {} generations in a row failed, the last: {}", st.self_name,
                                             st.generation_failures, gens.error().text())));
      return;
    }
    self->delayed_send(self, staleness_poll, next_atom::value);
    return;
  }
  st.generation_failures = 0;
  if (st.metrics) {
    std::uint64_t tokens = 0;
    for (const auto& gen : *gens) tokens += gen.ids.size();
    st.metrics->record_generation(gens->size(), tokens,
                                  std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  auto next = gens->begin() + o.group_size;
  for (auto& b : g.with) {
    b.generations.assign(std::make_move_iterator(next), std::make_move_iterator(next + o.group_size));
    next += o.group_size;
    st.ahead[b.number] = std::move(b);
  }
  g.with.clear();
  gens->resize(o.group_size);
  submit_samples(self, std::move(*gens));
}

// Sends the current group's completions to the referee, one settle job each.
void submit_samples(rollout_actor_t* self, std::vector<policy::generation> gens) {
  auto& st = self->state;
  auto& g = *st.group;
  const auto& o = st.options;
  g.at = group_run::phase::settling;
  g.samples.resize(gens.size());
  g.settled.assign(gens.size(), false);
  for (std::size_t i = 0; i < gens.size(); ++i) {
    auto& gen = gens[i];
    auto& s = g.samples[i];
    s.candidate_id = fmt::format("{}/{}-{:016x}", g.id, i, text_hash(gen.text));
    s.prompt_ids = std::move(gen.prompt_ids);
    s.completion_ids = std::move(gen.ids);
    s.behaviour_logprobs = std::move(gen.logprobs);
    auto code = extract_code(gen.text);
    if (!code.code) ++st.n.no_code;
    // A completion without code goes to the referee with empty code: it
    // settles as NoCode at once, durably, without an evaluator.
    candidate_fields c{s.candidate_id, g.task->id, code.code.value_or(""), st.self_name, g.id, st.version};
    std::string job = "settle/" + s.candidate_id;
    g.job_ids.push_back(job);
    ++g.open;
    submit(self, job, "settle", candidate_envelope(c, st.self_name), settled_atom::value);
  }
  spdlog::debug("rollout {}: group {} on {} submitted ({} samples)", st.self_name, g.id, g.task->id, g.samples.size());
  self->delayed_send(self, o.settle_deadline, deadline_atom::value, g.number);
}

void finish_group(rollout_actor_t* self) {
  auto& st = self->state;
  auto g = std::move(*st.group);
  st.group.reset();
  std::vector<settled_sample> done;
  for (std::size_t i = 0; i < g.samples.size(); ++i) {
    if (g.settled[i]) done.push_back(std::move(g.samples[i]));
    else ++st.n.unsettled;
  }
  st.next_group = std::max(st.next_group, g.number + 1);
  if (st.metrics) st.metrics->record_group(!done.empty());
  if (done.empty()) {
    spdlog::warn("rollout {}: group {} has no settled sample by its deadline: not sent", st.self_name, g.id);
    save_progress(st);
    acknowledge(st, g.job_ids);
  } else {
    // The learner job is named by the group's number, not by the version
    // that sampled it: a restarted rollout that samples group N again with
    // newer weights (its state file says N until the learner answers)
    // resubmits the same job, which the hub answers once, so the learner
    // trains group N once (the chaos test trained such groups twice). A
    // group sampled again after a stale refusal has a job of its own.
    std::string job = learner_job_id(st.self_name, g.number, resamples_of(st, g.number));
    st.n.samples_sent += done.size();
    ++st.n.groups_sent;
    auto payload = group_envelope(g.id, g.number, g.task->id, st.self_name, st.version, done, st.self_name);
    st.at_learner[job] = {g.number, st.version, std::move(g.job_ids)};
    submit(self, job, st.options.learner_job_kind, std::move(payload), learned_atom::value);
  }
  drop_early_through(st, g.number);
  self->send(self, next_atom::value);
}

// The learner's latest publication: fetch newer weights, then ask to start.
void on_latest(rollout_actor_t* self, const job_result& r) {
  auto& st = self->state;
  auto env = r.status == msg::JobStatus::Ok ? messages::open(r.payload) : result<const msg::Envelope*>(make_error(errc::unavailable, r.error));
  auto* wire = env ? (*env)->payload_as_PolicyPublication() : nullptr;
  if (!wire) {
    spdlog::warn("rollout {}: {} gave no publication: {}", st.self_name, r.id, env ? "not a PolicyPublication" : env.error().text());
    return retry_later(self);
  }
  auto p = learner::publication_from(*wire);
  st.latest_published = std::max(st.latest_published, p.version);
  if (p.version <= st.version) return ask_start(self);
  if (!p.path.empty()) {
    auto dir = weights_folder(p.path, st.options.model, st.options.weights_dir, st.self_name, p.version);
    if (!dir) {
      spdlog::error("rollout {}: version {}: {}", st.self_name, p.version, dir.error().text());
      return ask_start(self);
    }
    st.ready = {p.version, *dir};
    switch_weights(self);
    return ask_start(self);
  }
  st.incoming.emplace(p);
  st.next_chunk = st.chunks_out = 0;
  ask_chunks(self);
}

void on_chunk(rollout_actor_t* self, const job_result& r) {
  auto& st = self->state;
  if (!st.incoming) return;  // a late chunk of an abandoned fetch
  --st.chunks_out;
  auto env = r.status == msg::JobStatus::Ok ? messages::open(r.payload) : result<const msg::Envelope*>(make_error(errc::unavailable, r.error));
  auto* c = env ? (*env)->payload_as_PolicyChunk() : nullptr;
  status added = c ? st.incoming->add(c->index(), messages::span_of(c->data()))
                   : status(make_error(errc::unavailable, r.id + ": " + (env ? "not a PolicyChunk" : env.error().text())));
  if (!added || (c && c->version() != st.incoming->announced().version)) {
    spdlog::warn("rollout {}: fetching version {} failed: {}", st.self_name, st.incoming->announced().version,
                 added ? "a chunk of another version" : added.error().text());
    st.incoming.reset();
    return retry_later(self);
  }
  if (!st.incoming->complete()) return ask_chunks(self);
  auto weights = st.incoming->finish();
  std::uint64_t version = st.incoming->announced().version;
  st.incoming.reset();
  if (!weights) {
    spdlog::error("rollout {}: version {}: {}", st.self_name, version, weights.error().text());
    return retry_later(self);
  }
  auto dir = unpack_weights(*weights, st.options.model, st.options.weights_dir, st.self_name, version);
  if (!dir) {
    spdlog::error("rollout {}: version {}: {}", st.self_name, version, dir.error().text());
    return retry_later(self);
  }
  st.ready = {version, *dir};
  switch_weights(self);
  ask_start(self);
}

caf::behavior rollout_fn(rollout_actor_t* self, std::shared_ptr<rollout_state> init) {
  self->state = std::move(*init);
  self->link_to(self->state.client.actor());
  self->send(self, next_atom::value);
  return {
      [=](next_atom) { start_group(self); },
      [=](exemplars_atom, job_result& r) {
        auto& st = self->state;
        auto& g = st.group;
        if (!g || g->at != group_run::phase::exemplars) return;
        auto* answer = r.id == g->exemplar_job ? &g->exemplars : nullptr;
        for (auto& b : g->with)
          if (r.id == b.exemplar_job) answer = &b.exemplars;
        if (!answer || *answer) return;
        answer->emplace();
        if (r.status == msg::JobStatus::Ok) {
          auto e = exemplars_from(r.payload);
          if (e) **answer = std::move(*e);
          else spdlog::warn("rollout {}: {}", st.self_name, e.error().text());
        } else {
          spdlog::warn("rollout {}: {} failed: {}", st.self_name, r.id, r.error);
        }
        if (!g->exemplars) return;
        for (const auto& b : g->with)
          if (!b.exemplars) return;
        sample_groups(self);
      },
      [=](exdeadline_atom, std::uint64_t number) {
        auto& g = self->state.group;
        if (!g || g->number != number || g->at != group_run::phase::exemplars) return;
        spdlog::warn("rollout {}: no exemplars for {} within {} ms: prompting without", self->state.self_name, g->id,
                     self->state.options.exemplar_deadline.count());
        if (!g->exemplars) g->exemplars.emplace();
        for (auto& b : g->with)
          if (!b.exemplars) b.exemplars.emplace();
        sample_groups(self);
      },
      [=](deadline_atom, std::uint64_t number) {
        auto& g = self->state.group;
        if (!g || g->number != number || g->at != group_run::phase::settling) return;
        spdlog::warn("rollout {}: group {}: {} settlements missing at the deadline", self->state.self_name, g->id, g->open);
        finish_group(self);
      },
      [=](settled_atom, job_result& r) {
        auto& st = self->state;
        auto& g = st.group;
        if (!g || g->at != group_run::phase::settling) return;
        for (std::size_t i = 0; i < g->samples.size(); ++i) {
          auto& s = g->samples[i];
          if (g->settled[i] || r.id != "settle/" + s.candidate_id) continue;
          --g->open;
          if (r.status != msg::JobStatus::Ok) {
            spdlog::warn("rollout {}: {} failed: {}", st.self_name, r.id, r.error);
          } else if (auto out = settlement_from(r.payload, s.candidate_id); !out) {
            spdlog::warn("rollout {}: {}", st.self_name, out.error().text());
          } else {
            s.reward = out->reward;
            s.settlement = out->status;
            g->settled[i] = true;
          }
          break;
        }
        if (g->open == 0) finish_group(self);
      },
      [=](learned_atom, job_result& r) {
        auto& st = self->state;
        auto it = st.at_learner.find(r.id);
        if (it == st.at_learner.end()) return;
        const bool stale = r.status != msg::JobStatus::Ok && learner::is_stale_refusal(r.error);
        if (stale) {
          // Sampled again with newer weights under a new job (the refused
          // one is answered); the state file says so before the answer is
          // acknowledged, so a restart samples it again under the same job.
          spdlog::info("rollout {}: {}: sampling the group again with newer weights", st.self_name, r.error);
          st.redo.insert(it->second.number);
          ++st.resamples[it->second.number];
          ++st.n.resampled;
        } else if (r.status != msg::JobStatus::Ok) {
          spdlog::warn("rollout {}: the learner refused {}: {}", st.self_name, r.id, r.error);
        }
        if (st.metrics)
          st.metrics->record_answer(it->second.version, r.status == msg::JobStatus::Ok,
                                    learner::trained_version({reinterpret_cast<const char*>(r.payload.data()), r.payload.size()}));
        auto job_ids = std::move(it->second.job_ids);
        st.at_learner.erase(it);
        save_progress(st);
        acknowledge(st, job_ids);
        st.client.acknowledge(r.id);
        self->send(self, next_atom::value);
      },
      [=](early_atom, job_result& r) {
        auto& st = self->state;
        // A previous incarnation's request outside any group is of no use now.
        if (!group_of(r.id, st.self_name)) return st.client.acknowledge(r.id);
        // A job this incarnation submitted while the result, delivered as a
        // previous incarnation's, waited in this mailbox (a group samples for
        // seconds): the client delivers a result once, so the submit gets no
        // answer of its own. Handle it as that answer.
        if (auto tag = waiting_for(st, r.id)) return self->send(self, caf::make_message(*tag, std::move(r)));
        st.early[r.id] = std::move(r);
      },
      // The learner's answers are read at once and never needed again (a
      // lost one is asked again): acknowledged on arrival, or the hub keeps
      // each in its job table and ledger, and the learner its result, for
      // the whole run (the soak saw 3.6 a minute of each kind, 284 in an hour).
      [=](latest_atom, job_result& r) {
        self->state.client.acknowledge(r.id);
        on_latest(self, r);
      },
      [=](chunk_atom, job_result& r) {
        self->state.client.acknowledge(r.id);
        on_chunk(self, r);
      },
      [=](start_atom, job_result& r) {
        auto& st = self->state;
        st.client.acknowledge(r.id);
        std::string answer(r.payload.begin(), r.payload.end());
        if (r.status != msg::JobStatus::Ok) {
          spdlog::warn("rollout {}: {} failed: {}", st.self_name, r.id, r.error);
          return retry_later(self);
        }
        if (answer != "go") {
          ++st.n.staleness_waits;
          return retry_later(self);  // the learner's admission says wait: ask for newer weights again
        }
        st.asking = false;
        begin_group(self);
      },
      [=](node::stats_atom) { return counters_text(self->state); },
  };
}

}  // namespace

result<caf::actor> spawn_rollout(caf::actor_system& sys, const rollout_options& options, policy::policy policy,
                                 bus::peer_options peer, std::shared_ptr<bus::transport> transport,
                                 metrics::registry_ptr metrics) {
  auto st = std::make_shared<rollout_state>();
  st->options = options;
  st->policy = std::move(policy);
  st->version = st->latest_published = options.policy_version;
  st->self_name = peer.name;
  st->nonce = std::to_string(messages::now_ns());
  if (metrics) {
    st->metrics = std::make_unique<rollout_metrics>(std::move(metrics), st->self_name);
    st->metrics->record_version(st->version);
  }
  auto tasks = load_tasks(options.tasks_dir, options.tasks);
  if (!tasks) return tasks.error();
  st->schedule.emplace(std::move(*tasks),
                       options.schedule == "weighted" ? schedule_kind::weighted : schedule_kind::round_robin,
                       options.seed);
  auto prompt = prompt_template::load_or_builtin(options.prompt_template);
  if (!prompt) return prompt.error();
  st->prompt = std::move(*prompt);
  if (!options.model.empty()) {  // tests hand over a policy built in memory
    auto chat = policy::load_chat_format(options.model);
    if (!chat) return chat.error();
    st->chat = std::move(*chat);
    if (!options.chat_template) st->chat.chat.reset();
  }
  spdlog::info("rollout {}: {}", st->self_name, policy::describe(st->chat));
  auto progress = options.state_file.empty() ? result<rollout_progress>(rollout_progress{})
                                              : read_progress(options.state_file);
  if (!progress) return progress.error();
  st->next_group = st->first_group = progress->next;
  st->resamples = std::move(progress->resamples);

  // The client exists before the actor: what it hears before then waits.
  auto target = std::make_shared<node::pending_target>();
  node::client_actor_options co;
  co.peer = std::move(peer);
  co.peer.role = msg::Role::Rollout;
  co.manual_acks = true;
  co.on_other_result = [target](const job_result& r) { target->send(caf::make_message(early_atom::value, r)); };
  st->client = node::spawn_client(sys, co, std::move(transport));
  auto actor = sys.spawn<caf::detached>(rollout_fn, st);
  target->set(actor);
  return actor;
}

}  // namespace crucible::rollout
