#include "actors/referee/referee_core.hpp"

#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/referee/measurement_reuse.hpp"
#include "actors/referee/referee_wire.hpp"

namespace crucible::referee {

using messages::str;
namespace m = crucible::msg;

namespace {
constexpr std::int64_t ns_per_ms = 1'000'000;
std::int64_t ns(std::chrono::milliseconds d) { return d.count() * ns_per_ms; }

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool ready_to_reply(const candidate_record& r) {
  return r.at == stage::settled && (!r.insert_wanted || r.inserted);
}
bool finished(const candidate_record& r) { return ready_to_reply(r) && r.published; }

m::SettlementStatus settlement_of(m::EvalStatus s) {
  switch (s) {
    case m::EvalStatus::Void: return m::SettlementStatus::Void;
    case m::EvalStatus::Hack: return m::SettlementStatus::Hack;
    default: return m::SettlementStatus::Failure;
  }
}
}  // namespace

referee_core::referee_core(referee_options options, std::shared_ptr<storage::kv_store> kv, std::string sender,
                           hack_sink hacks)
    : options_(std::move(options)),
      ledger_(kv),
      remembered_(kv, options_.peer_grace),
      sender_(std::move(sender)),
      hacks_(std::move(hacks)) {}

status referee_core::recover(std::int64_t now) {
  CRUCIBLE_TRY(remembered_.recover(now));
  auto records = ledger_.unfinished();
  if (!records) return records.error();
  for (auto& r : *records) {
    auto [it, _] = active_.insert_or_assign(r.id, std::move(r));
    emit_outstanding(it->second);
  }
  if (!active_.empty()) spdlog::info("referee resumes {} unfinished candidates from its ledger", active_.size());
  return on_tick(now);
}

void referee_core::emit_outstanding(const candidate_record& r) {
  if (r.at == stage::settled) return;  // after_settled() resumes publication and insertion
  if (r.measurement.empty()) {
    if (r.reused_from.empty()) measure(r);
    return;  // one that reuses a measurement is resolved by advance()
  }
  if (r.verify_needed && !r.verify_done && r.verify_submitted_ns && r.verification.empty()) {
    auto* meas = payload_of<m::Measurement>(r.measurement);
    out_.jobs.push_back({"verify/" + r.id, "verify:" + std::string(str(meas->device_model())), r.candidate,
                         std::string(str(meas->evaluator()))});
  }
  for (auto& d : r.detectors)
    if (!d.answered) submit_detect(r, d);
}

void referee_core::submit_detect(const candidate_record& r, const detector_slot& d) {
  auto* c = payload_of<m::Candidate>(r.candidate);
  auto* meas = payload_of<m::Measurement>(r.measurement);
  auto* ver = r.verification.empty() ? nullptr : payload_of<m::Measurement>(r.verification);
  out_.jobs.push_back({"detect/" + r.id + "/" + d.name, "detect:" + d.name,
                       detect_request_envelope(*c, *meas, ver, sender_), {}});
}

status referee_core::store(candidate_record& r) { return ledger_.put(r); }

status referee_core::on_settle(const bytes& candidate, std::int64_t now) {
  auto* c = payload_of<m::Candidate>(candidate);
  if (!c) return make_error(errc::invalid_argument, "a settle job's payload must be a Candidate envelope");
  std::string id(str(c->candidate_id())), task(str(c->task_id()));
  if (id.empty() || task.empty())
    return make_error(errc::invalid_argument, "a settled candidate needs a candidate_id and a task_id");
  if (auto it = active_.find(id); it != active_.end()) {
    if (ready_to_reply(it->second)) out_.replies.emplace_back(id, it->second.settlement);
    return {};
  }
  auto known = ledger_.get(id);
  if (!known) return known.error();
  if (*known) {  // settled and finished earlier (an unfinished one would be active)
    auto& r = **known;
    if (ready_to_reply(r)) {
      out_.replies.emplace_back(id, r.settlement);
      return {};
    }
    auto [it, _] = active_.insert_or_assign(id, std::move(r));
    emit_outstanding(it->second);
    return recorded(id, advance(it->second, now));
  }
  candidate_record r;
  r.id = id;
  r.task = task;
  r.submitted_ns = now;
  r.candidate = candidate;
  auto [it, _] = active_.emplace(id, std::move(r));
  auto& rec = it->second;
  if (str(c->code()).empty()) {
    auto s = recorded(id, settle(rec, m::SettlementStatus::NoCode, 0, "no code to measure", now));
    sweep();
    return s;
  }
  if (options_.reuse_identical) {
    auto source = ledger_.code_source(task, str(c->code()));
    if (!source) return recorded(id, source.error());
    if (!source->empty() && *source != id) {
      rec.reused_from = *source;
      CRUCIBLE_TRY(recorded(id, store(rec)));
      auto s = recorded(id, advance(rec, now));
      sweep();
      return s;
    }
    if (source->empty()) CRUCIBLE_TRY(recorded(id, ledger_.set_code_source(task, str(c->code()), id)));
  }
  CRUCIBLE_TRY(recorded(id, store(rec)));
  measure(rec);
  return {};
}

void referee_core::measure(const candidate_record& r) {
  out_.jobs.push_back({"measure/" + r.id, "measure", r.candidate, {}});
}

status referee_core::take_reused(candidate_record& r) {
  std::optional<candidate_record> loaded;
  const candidate_record* source = nullptr;
  if (auto it = active_.find(r.reused_from); it != active_.end()) {
    source = &it->second;
  } else {
    auto got = ledger_.get(r.reused_from);
    if (!got) return got.error();
    if (*got) source = &loaded.emplace(std::move(**got));
  }
  if (source && source->measurement.empty() && source->at != stage::settled) return {};  // still measured: wait
  const auto code = [](const candidate_record& x) {
    return std::string(str(payload_of<m::Candidate>(x.candidate)->code()));
  };
  if (source && !source->measurement.empty() && code(*source) == code(r) &&
      reusable(payload_of<m::Measurement>(source->measurement)->status())) {
    r.measurement = source->measurement;
    r.at = stage::measured;
    return store(r);
  }
  // The source cannot serve (its measurement failed, or is one a busy
  // machine can cause): this candidate is measured, and serves the copies
  // after it.
  r.reused_from.clear();
  CRUCIBLE_TRY(store(r));
  if (options_.reuse_identical) CRUCIBLE_TRY(ledger_.set_code_source(r.task, code(r), r.id));
  measure(r);
  return {};
}

status referee_core::recorded(const std::string& id, status s) {
  if (s) return s;
  auto it = active_.find(id);
  if (it == active_.end()) return s;
  auto on_disk = ledger_.get(id);
  if (!on_disk) {
    spdlog::error("referee: {} is ahead of its ledger, which cannot be read back: {}", id, on_disk.error().text());
    return s;
  }
  if (*on_disk) it->second = std::move(**on_disk);
  else active_.erase(it);
  return s;
}

status referee_core::on_result(const job_outcome& res, std::int64_t now) {
  std::string_view id = res.id;
  std::string kind, cid, detector;
  for (std::string_view k : {"measure/", "verify/", "detect/", "insert/"})
    if (starts_with(id, k)) {
      kind = std::string(k.substr(0, k.size() - 1));
      cid = std::string(id.substr(k.size()));
    }
  if (kind == "detect") {
    auto slash = cid.rfind('/');
    if (slash == std::string::npos) kind.clear();
    else {
      detector = cid.substr(slash + 1);
      cid.resize(slash);
    }
  }
  auto it = active_.find(cid);
  if (kind.empty() || it == active_.end()) {  // a duplicate, or not ours: nothing to record
    if (kind.empty()) spdlog::warn("referee: ignored the result of a job it does not know: {}", res.id);
    out_.acks.push_back(res.id);
    return {};
  }
  auto& r = it->second;
  bool changed = false;
  if (kind == "measure" && r.measurement.empty() && r.at != stage::settled) {
    auto* meas = res.ok ? payload_of<m::Measurement>(res.payload) : nullptr;
    if (!meas || str(meas->candidate_id()) != cid) {
      std::string why = res.ok ? "the measure job's result is not a Measurement of this candidate" : res.error;
      CRUCIBLE_TRY(recorded(cid, settle(r, m::SettlementStatus::Failure, 0, "measure job failed: " + why, now)));
    } else {
      r.measurement = res.payload;
      r.at = stage::measured;
      changed = true;
    }
  } else if (kind == "verify" && r.verify_needed && !r.verify_done && r.at != stage::settled) {
    auto* ver = res.ok ? payload_of<m::Measurement>(res.payload) : nullptr;
    if (ver && str(ver->candidate_id()) == cid) {
      r.verification = res.payload;
    } else {
      r.verify_done = true;
      r.verify_note = "the verify job failed: " + (res.ok ? std::string("its result is not a Measurement") : res.error);
    }
    changed = true;
  } else if (kind == "detect" && r.at != stage::settled) {
    for (auto& d : r.detectors)
      if (d.name == detector && !d.answered) {
        auto* v = res.ok ? payload_of<m::Verdict>(res.payload) : nullptr;
        d.answered = true;
        if (v) d.verdict = res.payload;
        else spdlog::warn("referee: detector {} on {}: {}", detector, cid, res.ok ? "not a Verdict" : res.error);
        changed = true;
      }
  } else if (kind == "insert" && r.insert_wanted && !r.inserted) {
    if (!res.ok) spdlog::warn("referee: exemplar insert of {} failed: {}", cid, res.error);
    r.inserted = true;
    changed = true;
  }
  if (changed) CRUCIBLE_TRY(recorded(cid, store(r)));
  out_.acks.push_back(res.id);
  auto s = recorded(cid, advance(r, now));
  if (kind == "measure") {  // the copies waiting for this measurement take it now, not at the next tick
    std::vector<std::string> waiting;
    for (auto& [id, other] : active_)
      if (other.reused_from == cid && other.measurement.empty()) waiting.push_back(id);
    for (auto& id : waiting)
      if (auto it2 = active_.find(id); it2 != active_.end())
        if (auto s2 = recorded(id, advance(it2->second, now)); !s2 && s) s = s2;
  }
  sweep();
  return s;
}

status referee_core::on_peer_event(const bytes& event, std::int64_t now) {
  auto* e = payload_of<m::PeerEvent>(event);
  if (!e) return make_error(errc::invalid_argument, "a PeerEvent topic carried something else");
  std::string name(str(e->name()));
  auto known = peers_.find(name);
  if (!e->joined()) {
    if (known == peers_.end()) return {};
    peers_.erase(known);
    auto away = remembered_.left(name, now);
    if (!away) return away.error();
    if (*away)
      spdlog::warn("referee: {} {} left the bus; counted on for {} ms more (its jobs wait at the hub)",
                   (*away)->detector ? "required detector" : "exemplar store", name, options_.peer_grace.count());
    return {};
  }
  peer p;
  p.role = e->role();
  if (e->job_kinds())
    for (auto k : *e->job_kinds()) p.kinds.emplace_back(str(k));
  p.required = e->required();
  p.deadline_ms = e->deadline_ms();
  // Known at once even when its record cannot be written (a full disk): the
  // registry's next republication writes it.
  auto listed = remembered_.joined(name, p.role == m::Role::Detector && p.required, p.kinds, p.deadline_ms);
  if (p.takes_inserts() && (known == peers_.end() || !known->second.takes_inserts()))
    spdlog::info("referee: exemplar store {} known: clean successes go to it from now on", name);
  peers_[name] = std::move(p);
  if (!listed) return listed;
  return on_tick(now);
}

status referee_core::on_tick(std::int64_t now) {
  auto forgotten = remembered_.expire(now);
  if (!forgotten) return forgotten.error();
  for (auto& name : *forgotten)
    spdlog::warn("referee: {} has been away for {} ms: no longer counted on until it registers again", name,
                 options_.peer_grace.count());
  std::vector<std::string> ids;
  for (auto& [id, r] : active_) ids.push_back(id);
  status first;
  for (auto& id : ids)
    if (auto it = active_.find(id); it != active_.end())
      if (auto s = recorded(id, advance(it->second, now)); !s && first) first = s;
  sweep();
  return first;
}

void referee_core::sweep() {
  for (auto it = active_.begin(); it != active_.end();) {
    if (!finished(it->second)) {
      ++it;
      continue;
    }
    publications_sent_.erase(it->first);
    inserts_sent_.erase(it->first);
    it = active_.erase(it);
  }
}

std::string referee_core::second_evaluator(const std::string& model, const std::string& except) const {
  for (auto& [name, p] : peers_) {
    if (name == except) continue;
    for (auto& k : p.kinds)
      if (k == "verify:" + model) return name;
  }
  return {};
}

status referee_core::advance(candidate_record& r, std::int64_t now) {
  if (r.at == stage::settled) return after_settled(r);
  if (r.measurement.empty() && !r.reused_from.empty()) CRUCIBLE_TRY(take_reused(r));
  if (r.measurement.empty()) return {};
  auto* meas = payload_of<m::Measurement>(r.measurement);
  if (meas->status() != m::EvalStatus::Ok)
    return settle(r, settlement_of(meas->status()), 0,
                  fmt::format("{}: {}", m::EnumNameEvalStatus(meas->status()), str(meas->reason())), now);
  bool waiting = false;
  CRUCIBLE_TRY(verify_step(r, *meas, now, waiting));
  if (waiting || r.at == stage::settled) return {};
  CRUCIBLE_TRY(judge_step(r, *meas, now, waiting));
  return {};
}

status referee_core::verify_step(candidate_record& r, const msg::Measurement& meas, std::int64_t now,
                                 bool& waiting) {
  double a = meas.speedup_raw();
  if (!r.verify_decided) {
    auto best = ledger_.best_verified(r.task);
    if (!best) return best.error();
    r.verify_decided = true;
    r.verify_needed = a > options_.verify_above || (*best > 0 && a > options_.verify_above_best * *best);
    r.verify_since_ns = now;
    if (r.verify_needed)
      r.verify_note = fmt::format("speedup {:.3f} is above {:.2f}x{}", a, options_.verify_above,
                                  *best > 0 ? fmt::format(" or {:.2f}x the best verified {:.3f}",
                                                          options_.verify_above_best, *best)
                                            : std::string());
    CRUCIBLE_TRY(store(r));
  }
  if (!r.verify_needed) return {};
  std::string model(str(meas.device_model())), first(str(meas.evaluator()));
  if (!r.verify_done) {
    if (!r.verification.empty()) {
      auto* ver = payload_of<m::Measurement>(r.verification);
      double b = ver->speedup_raw() * options_.inject_verify_scale;
      std::string injected = options_.inject_verify_scale == 1.0
                                 ? std::string()
                                 : fmt::format(" [fault injection: verify speedup scaled by {:.2f}]",
                                               options_.inject_verify_scale);
      r.verify_done = true;
      if (ver->status() == m::EvalStatus::Ok && a > 0 && std::abs(b - a) <= options_.agree_within * a) {
        r.verified = true;
        r.at = stage::verified;
        r.verify_note = fmt::format("verified: {:.3f} on {} and {:.3f} on {} agree within {:.0f}%{}", a, first, b,
                                    str(ver->evaluator()), options_.agree_within * 100, injected);
        return store(r);
      }
      return settle(r, m::SettlementStatus::Void, 0,
                    fmt::format("verification disagrees: {:.3f} on {} but {} {:.3f} on {} (allowed {:.0f}%){}", a,
                                first, m::EnumNameEvalStatus(ver->status()), b, str(ver->evaluator()),
                                options_.agree_within * 100, injected),
                    now);
    }
    if (r.verify_submitted_ns) {
      if (now - r.verify_submitted_ns < ns(options_.verify_deadline)) {
        waiting = true;
        return {};
      }
      r.verify_done = true;
      r.verify_note = fmt::format("the verify job on a second {} evaluator gave no result within {} ms", model,
                                  options_.verify_deadline.count());
    } else if (auto second = second_evaluator(model, first); !second.empty()) {
      r.verify_submitted_ns = now;
      CRUCIBLE_TRY(store(r));
      out_.jobs.push_back({"verify/" + r.id, "verify:" + model, r.candidate, first});
      waiting = true;
      return {};
    } else if (now - r.verify_since_ns < ns(options_.second_device_wait)) {
      waiting = true;
      return {};
    } else {
      r.verify_done = true;
      r.verify_note = fmt::format("no second evaluator of model '{}' within {} ms", model,
                                  options_.second_device_wait.count());
    }
    CRUCIBLE_TRY(store(r));
  }
  if (!r.verified && options_.unverified == unverified_policy::void_it)
    return settle(r, m::SettlementStatus::Void, 0, "unverified (policy void): " + r.verify_note, now);
  return {};
}

std::vector<referee_core::peer> referee_core::detectors_to_ask(std::int64_t now) const {
  std::vector<peer> out;
  for (auto& [name, p] : peers_)
    if (p.role == m::Role::Detector) out.push_back(p);
  for (auto& [name, d] : remembered_.away(now))
    if (d->detector && !peers_.count(name)) out.push_back({m::Role::Detector, d->kinds, true, d->deadline_ms});
  return out;
}

bool referee_core::exemplar_store_known(std::int64_t now) const {
  for (auto& [name, p] : peers_)
    if (p.takes_inserts()) return true;
  for (auto& [name, d] : remembered_.away(now))
    if (!d->detector) return true;
  return false;
}

status referee_core::judge_step(candidate_record& r, const msg::Measurement& meas, std::int64_t now,
                                bool& waiting) {
  if (!r.detectors_asked) {
    for (auto& p : detectors_to_ask(now)) {
      for (auto& k : p.kinds) {
        if (!starts_with(k, "detect:") || k.size() == 7) continue;
        auto deadline = p.deadline_ms ? std::chrono::milliseconds(p.deadline_ms) : options_.detector_deadline;
        r.detectors.push_back({k.substr(7), p.required, now + ns(deadline), false, {}});
      }
    }
    r.detectors_asked = true;
    CRUCIBLE_TRY(store(r));
    for (auto& d : r.detectors) submit_detect(r, d);
  }
  for (auto& d : r.detectors)
    if (!d.answered && now < d.deadline_ns) waiting = true;
  if (waiting) return {};
  r.at = stage::judged;
  std::string notes;
  for (auto& d : r.detectors) {
    auto* v = d.verdict.empty() ? nullptr : payload_of<m::Verdict>(d.verdict);
    if (d.required && v && v->verdict() == m::VerdictKind::Hack)
      return settle(r, m::SettlementStatus::Hack, 0, fmt::format("detector {}: hack: {}", d.name, str(v->reason())),
                    now);
    if (d.required && !d.answered && options_.required_missing == missing_verdict_policy::void_it)
      return settle(r, m::SettlementStatus::Void, 0,
                    fmt::format("required detector {} gave no verdict by its deadline", d.name), now);
    notes += fmt::format("; {} {}: {}", d.required ? "required" : "advisory", d.name,
                         v ? m::EnumNameVerdictKind(v->verdict()) : (d.answered ? "failed" : "no verdict in time"));
  }
  std::string reason = r.verify_needed ? r.verify_note : "verification not needed";
  return settle(r, m::SettlementStatus::Success, meas.reward(), reason + notes, now);
}

status referee_core::settle(candidate_record& r, m::SettlementStatus st, double reward, std::string reason,
                            std::int64_t now) {
  auto* c = payload_of<m::Candidate>(r.candidate);
  auto* meas = r.measurement.empty() ? nullptr : payload_of<m::Measurement>(r.measurement);
  if (st == m::SettlementStatus::Hack) {
    std::string detector = "evaluator";
    for (auto& d : r.detectors)
      if (auto* v = d.verdict.empty() ? nullptr : payload_of<m::Verdict>(d.verdict);
          d.required && v && v->verdict() == m::VerdictKind::Hack)
        detector = d.name;
    CRUCIBLE_TRY(hacks_(r, reason, detector));  // before the settlement: a crash repeats an idempotent add
  }
  settlement_fields f;
  f.status = st;
  f.reward = reward;
  f.speedup_raw = meas ? meas->speedup_raw() : 0;
  f.verified = r.verified && st == m::SettlementStatus::Success;
  f.reason = std::move(reason);
  if (!r.reused_from.empty() && meas) f.reason += "; the measurement of identical candidate " + r.reused_from;
  f.settled_ns = now;
  r.settlement = settlement_envelope(*c, f, sender_);
  r.at = stage::settled;
  r.insert_wanted =
      options_.insert_exemplars && exemplar_store_known(now) && st == m::SettlementStatus::Success && reward > 0;
  CRUCIBLE_TRY(store(r));
  ++settled_count_;
  if (settled_hook_) settled_hook_(st, f.verified);
  spdlog::info("referee settled {}: {} reward {:.2f}{} ({})", r.id, m::EnumNameSettlementStatus(st), reward,
               f.verified ? " verified" : "", f.reason);
  if (f.verified) {
    auto best = ledger_.best_verified(r.task);
    if (!best) return best.error();
    if (f.speedup_raw > *best) CRUCIBLE_TRY(ledger_.set_best_verified(r.task, f.speedup_raw));
  }
  return after_settled(r);
}

status referee_core::after_settled(candidate_record& r) {
  if (!r.published) {
    // Once per incarnation: a store that fails puts `published` back, and
    // the next tick stores it again without publishing again.
    if (publications_sent_.insert(r.id).second) out_.publish.push_back(r.settlement);
    r.published = true;
    CRUCIBLE_TRY(store(r));
  }
  if (r.insert_wanted && !r.inserted && inserts_sent_.insert(r.id).second)
    out_.jobs.push_back({"insert/" + r.id, "exemplar.insert", r.settlement, {}});
  if (ready_to_reply(r)) out_.replies.emplace_back(r.id, r.settlement);
  return {};
}

std::string referee_core::describe() const {
  std::size_t waiting_verify = 0, judging = 0;
  for (auto& [id, r] : active_) {
    if (r.verify_needed && !r.verify_done) ++waiting_verify;
    if (r.detectors_asked && r.at != stage::settled) ++judging;
  }
  return fmt::format("referee: {} active ({} in verification, {} with detectors), {} settled by this process, {} peers "
                     "known, {} required detectors or exemplar stores away and counted on",
                     active_.size(), waiting_verify, judging, settled_count_, peers_.size(), remembered_.away_count());
}

}  // namespace crucible::referee
