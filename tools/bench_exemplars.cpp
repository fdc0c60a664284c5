// Exemplar store benchmark: inserts of many exemplars over many tasks, sample
// latency of the incremental bucket index against a naive peer that scans the
// task's exemplars on every draw, and memory. Prints a table for
// docs/benchmarks.md ("Exemplar store").
//
//   crucible-bench-exemplars [--exemplars 1000000] [--tasks 250] [--code-bytes 512]
//                            [--samples 100000] [--naive-samples 2000] [--batch 1000] [--dir DIR]
//                            [--insert-hints on|off] [--write-buffer-mib 64]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "actors/exemplar/exemplar_keys.hpp"
#include "actors/exemplar/exemplar_store.hpp"
#include "storage/rocksdb_store.hpp"
#include "storage/temp_dir.hpp"

using namespace crucible;
using namespace crucible::exemplar;
using clock_type = std::chrono::steady_clock;

namespace {

struct config {
  std::size_t exemplars = 1000000;
  std::size_t tasks = 250;
  std::size_t code_bytes = 512;
  std::size_t samples = 100000;
  std::size_t naive_samples = 2000;
  std::size_t batch = 10000;
  std::string dir;
  storage::rocksdb_options db;
};

long status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::strlen(field));
  return -1;
}

std::string task_name(std::size_t t) { return fmt::format("level{}/{}", 1 + t % 3, t); }

// CPU seconds of the calling thread (excludes RocksDB's background flushes
// and compactions, and time lost to other processes on a shared machine).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

struct latency {
  double p50_us, p99_us, max_us;
};
latency summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[std::min(us.size() - 1, static_cast<std::size_t>(q * us.size()))]; };
  return {at(0.50), at(0.99), us.back()};
}

// The peer: no index, no statistics; every draw scans the task's exemplars,
// groups them by bucket, applies Equation 1 and picks within the buckets.
std::vector<std::string> naive_sample(storage::kv_store& kv, const std::string& task, std::size_t n, double tau, rng& gen) {
  std::map<std::int32_t, std::vector<std::pair<std::string, double>>> by_bucket;
  (void)kv.scan(storage::family::exemplars, keys::exemplar_prefix(task), [&](std::string_view k, std::string_view v) {
    auto rec = keys::decode_record(v);
    auto key = keys::parse_exemplar_key(k);
    if (rec && key) by_bucket[rec->bucket].emplace_back(key->id, rec->score);
    return true;
  });
  std::vector<double> means;
  std::vector<const std::vector<std::pair<std::string, double>>*> lists;
  for (const auto& [b, list] : by_bucket) {
    double sum = 0;
    for (const auto& [id, s] : list) sum += s;
    means.push_back(sum / list.size());
    lists.push_back(&list);
  }
  std::vector<std::string> ids;
  for (std::size_t i : draw_without_replacement(equation1(means, tau), n, gen))
    ids.push_back((*lists[i])[uniform_below(gen, lists[i]->size())].first);
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  config c;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--exemplars") c.exemplars = std::stoul(v);
    else if (k == "--tasks") c.tasks = std::stoul(v);
    else if (k == "--code-bytes") c.code_bytes = std::stoul(v);
    else if (k == "--samples") c.samples = std::stoul(v);
    else if (k == "--naive-samples") c.naive_samples = std::stoul(v);
    else if (k == "--batch") c.batch = std::stoul(v);
    else if (k == "--dir") c.dir = v;
    else if (k == "--insert-hints") c.db.insert_hint_by_nul_prefix = v == "on";
    else if (k == "--write-buffer-mib") c.db.write_buffer_mib = std::stoul(v);
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  storage::temp_dir scratch("bench-exemplars");
  const std::string path = c.dir.empty() ? scratch.sub("db") : c.dir;
  fmt::print("exemplar store benchmark: {} exemplars over {} tasks, {} B codes, batches of {}, db {}\n", c.exemplars,
             c.tasks, c.code_bytes, c.batch, path);
  long rss_start = status_kib("VmRSS:");

  // Scores: speedups, mostly near 1, a long tail up to ~10x.
  rng gen(12345);
  auto make_code = [&](std::size_t i) {
    std::string code = fmt::format("# candidate {}\nclass ModelNew(torch.nn.Module):\n", i);
    while (code.size() < c.code_bytes) {
      std::uint64_t r = gen();
      for (int k = 0; k < 8 && code.size() < c.code_bytes; ++k, r >>= 8) code += static_cast<char>('a' + (r & 0xff) % 26);
    }
    return code;
  };
  auto make_score = [&] { return std::round((1.0 + std::exp(unit_double(gen) * 2.3) - 1.0) * 100) / 100; };

  double insert_s = 0, insert_cpu_s = 0;
  {
    std::shared_ptr<storage::kv_store> kv = storage::open_rocksdb(path, c.db).value();
    auto store = exemplar_store::open(kv).value();
    std::vector<exemplar_input> batch;
    // Only the store's work is timed, not making the inputs.
    for (std::size_t i = 0; i < c.exemplars; ++i) {
      batch.push_back({task_name(i % c.tasks), fmt::format("cand-{:08}", i), make_code(i), make_score()});
      if (batch.size() == c.batch || i + 1 == c.exemplars) {
        auto t0 = clock_type::now();
        double cpu0 = thread_cpu_seconds();
        auto r = store->insert_batch(batch);
        insert_s += seconds_since(t0);
        insert_cpu_s += thread_cpu_seconds() - cpu0;
        if (!r.ok()) {
          fmt::print(stderr, "insert failed: {}\n", r.error().text());
          return 1;
        }
        batch.clear();
      }
    }
  }
  long rss_after_insert = status_kib("VmRSS:");

  // Single inserts (one atomic batch each), for comparison.
  std::size_t singles = std::min<std::size_t>(50000, c.exemplars / 10 + 1);
  double single_s = 0;
  std::shared_ptr<storage::kv_store> kv = storage::open_rocksdb(path, c.db).value();
  auto store = exemplar_store::open(kv).value();
  for (std::size_t i = 0; i < singles; ++i) {
    exemplar_input e{task_name(i % c.tasks), fmt::format("single-{:08}", i), make_code(i), make_score()};
    auto t0 = clock_type::now();
    auto r = store->insert(e);
    single_s += seconds_since(t0);
    if (!r.ok()) return 1;
  }

  // Sampling through the index (store reopened above: first touches load each
  // task's bucket statistics from disk).
  std::vector<double> us;
  us.reserve(c.samples);
  std::size_t got = 0;
  for (std::size_t i = 0; i < c.samples; ++i) {
    const std::string task = task_name(uniform_below(gen, c.tasks));
    auto t0 = clock_type::now();
    auto r = store->sample(task, 2, 1.0, gen);
    us.push_back(seconds_since(t0) * 1e6);
    if (!r.ok()) return 1;
    got += r->size();
  }
  latency indexed = summarize(us);

  std::vector<double> naive_us;
  std::size_t naive_got = 0;
  for (std::size_t i = 0; i < c.naive_samples; ++i) {
    const std::string task = task_name(uniform_below(gen, c.tasks));
    auto t0 = clock_type::now();
    naive_got += naive_sample(*kv, task, 2, 1.0, gen).size();
    naive_us.push_back(seconds_since(t0) * 1e6);
  }
  latency naive = summarize(naive_us);
  long rss_end = status_kib("VmRSS:");
  long hwm = status_kib("VmHWM:");

  fmt::print("\n| measure | value |\n|---|---|\n");
  fmt::print("| batched inserts ({} per batch), wall clock | {:.0f} /s ({} in {:.1f} s) |\n", c.batch,
             c.exemplars / insert_s, c.exemplars, insert_s);
  fmt::print("| batched inserts, CPU time of the inserting thread | {:.0f} /s ({:.1f} s) |\n", c.exemplars / insert_cpu_s,
             insert_cpu_s);
  fmt::print("| single inserts (one atomic batch each) | {:.0f} /s ({} in {:.1f} s) |\n", singles / single_s, singles, single_s);
  fmt::print("| sample n=2, bucket index: p50 / p99 / max | {:.1f} / {:.1f} / {:.0f} us ({} draws, {} exemplars) |\n",
             indexed.p50_us, indexed.p99_us, indexed.max_us, c.samples, got);
  fmt::print("| sample n=2, naive scan peer: p50 / p99 / max | {:.0f} / {:.0f} / {:.0f} us ({} draws, {} exemplars) |\n",
             naive.p50_us, naive.p99_us, naive.max_us, c.naive_samples, naive_got);
  fmt::print("| peer / index latency ratio, p50 and p99 | {:.0f}x and {:.0f}x |\n", naive.p50_us / indexed.p50_us,
             naive.p99_us / indexed.p99_us);
  fmt::print("| RSS: start / after inserts / end / peak | {} / {} / {} / {} MiB |\n", rss_start / 1024,
             rss_after_insert / 1024, rss_end / 1024, hwm / 1024);
  return 0;
}
