// Data parallelism: two processes joined by c10d Gloo, each given the same
// batches, take the same optimizer steps as one process on the whole batch.
// LibTorch first: glog defines a CHECK that doctest's must replace.
#include "actors/learner/distributed.hpp"
#include "actors/learner/learner_test_support.hpp"

#include <doctest/doctest.h>

#include <spawn.h>
#include <sys/wait.h>

#include "actors/policy/test_support.hpp"

extern char** environ;

namespace crucible::learner {
namespace {

pid_t start_probe(int rank, int world, const std::string& store, const std::string& out) {
  const std::string exe = std::string(CRUCIBLE_BINARY_DIR) + "/bin/learner_dp_probe";
  std::vector<std::string> args{exe, std::to_string(rank), std::to_string(world), store, out};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  REQUIRE(::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv.data(), environ) == 0);
  return pid;
}

void wait_ok(pid_t pid) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

std::vector<torch::Tensor> load(const std::filesystem::path& p) {
  std::vector<torch::Tensor> v;
  torch::load(v, p.string());
  return v;
}

TEST_CASE("two Gloo ranks on halves of each batch take the same steps as one process on the whole batch") {
  policy::testing::scratch_dir dir;
  wait_ok(start_probe(0, 1, (dir / "store1").string(), (dir / "alone.pt").string()));
  const auto r0 = start_probe(0, 2, (dir / "store2").string(), (dir / "rank0.pt").string());
  const auto r1 = start_probe(1, 2, (dir / "store2").string(), (dir / "rank1.pt").string());
  wait_ok(r0);
  wait_ok(r1);
  auto alone = load(dir / "alone.pt"), rank0 = load(dir / "rank0.pt"), rank1 = load(dir / "rank1.pt");
  REQUIRE(alone.size() == rank0.size());
  REQUIRE(alone.size() == rank1.size());
  // Losses and statistics of both steps (summed over ranks) match the single process.
  for (std::size_t step = 0; step < 2; ++step) {
    INFO("step " << step << " alone " << alone[step] << " rank0 " << rank0[step]);
    CHECK(torch::allclose(alone[step], rank0[step], 1e-5, 1e-7));
    CHECK(torch::equal(rank0[step], rank1[step]));
  }
  // Parameters after two steps: the ranks agree exactly, and with the single
  // process up to summation order. AdamW divides by sqrt(v), so for a
  // parameter whose gradient is near zero, a difference in the last bits of
  // the summed gradient moves its update by a fraction of the learning rate
  // (1e-2): 1e-4 is 1% of one step.
  double worst = 0;
  for (std::size_t i = 2; i < alone.size(); ++i) {
    CHECK(torch::equal(rank0[i], rank1[i]));
    worst = std::max(worst, (alone[i] - rank0[i]).abs().max().item<double>());
  }
  MESSAGE("largest parameter difference, 1 process vs 2 ranks: " << worst);
  CHECK(worst < 1e-4);
  // The steps moved the weights far more than that.
  auto fresh = testing::tiny_policy(31)->parameters();
  double moved = 0;
  for (std::size_t i = 0; i < fresh.size(); ++i) moved = std::max(moved, (alone[i + 2] - fresh[i]).abs().max().item<double>());
  CHECK(moved > 1e-3);
}

}  // namespace
}  // namespace crucible::learner
