#include "actors/evaluator/syntax_check.hpp"

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "actors/evaluator/scratch.hpp"

namespace crucible::evaluator {

namespace {

// Exit 3 with the SyntaxError on stderr; 0 when the source compiles or the
// error is not a SyntaxError (the worker judges those).
constexpr const char* kCheck = R"(import sys, traceback
src = open("candidate.py", encoding="utf-8").read()
try:
    compile(src, "<crucible_candidate>", "exec")
except SyntaxError as e:
    sys.stderr.write("".join(traceback.format_exception_only(type(e), e)))
    sys.exit(3)
except Exception:
    pass
)";
constexpr int kSyntaxErrorExit = 3;
constexpr auto kDeadline = std::chrono::seconds(10);

}  // namespace

result<std::optional<std::string>> syntax_error_of(const std::string& source, const worker_environment& env,
                                                   sandbox_limits limits, const std::filesystem::path& scratch_root) {
  auto scratch = scratch_dir::create(scratch_root, "syntax");
  if (!scratch) return scratch.error();
  {
    std::ofstream out(scratch->path() / "candidate.py", std::ios::binary);
    out << source;
    if (!out) return make_error(errc::io, "cannot write the candidate into " + scratch->path().string());
  }
  sandbox_spec spec;
  spec.program = env.python;
  spec.args = {"-I", "-S", "-B", "-c", kCheck};
  spec.env = {"HOME=" + scratch->path().string(), "TMPDIR=" + scratch->path().string(), "LANG=C.UTF-8",
              "CUDA_VISIBLE_DEVICES="};
  if (const char* path = std::getenv("PATH")) spec.env.push_back(std::string("PATH=") + path);
  spec.scratch = scratch->path();
  spec.log = scratch->path() / "syntax.log";
  limits.cpu_seconds = 10;
  spec.limits = std::move(limits);
  auto p = sandbox_process::start(spec);
  if (!p) return p.error();
  // The check writes no frame: receive() returns when the child exits (or at
  // the deadline, which kills it).
  (void)p->receive(std::chrono::steady_clock::now() + kDeadline);
  const auto& ended = p->exit_info();
  if (!ended || !ended->exited || ended->code != kSyntaxErrorExit) return std::optional<std::string>{};
  std::string text = p->log_tail(4000);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  text.erase(0, text.find_first_not_of(" \n"));
  return std::optional<std::string>{std::move(text)};
}

}  // namespace crucible::evaluator
