#include "actors/evaluator/compile_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <openssl/evp.h>

#include "actors/evaluator/scratch.hpp"

namespace crucible::evaluator {
namespace {

std::string run_capture(const std::string& command) {
  std::string out;
  if (FILE* f = ::popen(command.c_str(), "r")) {
    std::array<char, 512> buf;
    while (std::size_t n = std::fread(buf.data(), 1, buf.size(), f)) out.append(buf.data(), n);
    ::pclose(f);
  }
  return out;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// Holds an flock on a file for its lifetime.
class file_lock {
 public:
  explicit file_lock(const std::filesystem::path& p) : fd_(::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~file_lock() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

std::filesystem::path compile_cache_options::default_root() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "crucible/kernels";
  if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache/crucible/kernels";
  return "/tmp/crucible-kernels";
}

unsigned compile_cache_options::default_parallelism() {
  const unsigned cores = std::thread::hardware_concurrency();
  return std::max(1u, cores > 2 ? (cores - 2) / 2 : 1u);
}

sandbox_limits compile_cache_options::compile_limits() {
  sandbox_limits l;
  l.address_space_bytes = 16ull << 30;
  return l;
}

std::string compile_cache_options::host_arch() {
  struct utsname u {};
  ::uname(&u);
  return std::string("cpu-") + u.machine;
}

std::string compile_cache_options::default_cuda_arch_list() {
  const char* e = std::getenv("TORCH_CUDA_ARCH_LIST");
  return e && *e ? e : "9.0";
}

compile_cache::compile_cache(compile_cache_options options)
    : options_(std::move(options)), pool_(static_cast<std::ptrdiff_t>(std::max(1u, std::min(64u, options_.parallelism)))) {}

bool compile_cache::needs_compile(std::string_view source) {
  return source.find("load_inline") != std::string_view::npos ||
         source.find("cpp_extension") != std::string_view::npos;
}

std::string compile_cache::toolchain() {
  std::lock_guard lock(mutex_);
  if (toolchain_.empty()) {
    const auto env = worker_environment::defaults();
    // The torch build (its version.py), the Python, the host compiler and nvcc.
    std::string torch_dir = run_capture(
        env.python.string() +
        " -c \"import importlib.util as u,sys,os;print(os.path.dirname(u.find_spec('torch').origin)); "
        "print(sys.version.split()[0])\" 2>/dev/null");
    std::istringstream lines(torch_dir);
    std::string dir, pyver;
    std::getline(lines, dir);
    std::getline(lines, pyver);
    toolchain_ = fmt::format("torch:{}\npython:{}\ncxx:{}\nnvcc:{}", sha256_hex(read_file(dir + "/version.py")),
                             pyver, run_capture("c++ -dumpfullversion 2>/dev/null"),
                             run_capture("nvcc --version 2>/dev/null | tail -n 2"));
  }
  return toolchain_;
}

std::string compile_cache::key(std::string_view source) {
  return sha256_hex(fmt::format("{}\n--toolchain--\n{}\n--arch--\n{}\n{}", source, toolchain(), options_.arch,
                                options_.cuda_arch_list));
}

std::vector<std::string> compile_cache::worker_env() {
  return {"TORCH_CUDA_ARCH_LIST=" + options_.cuda_arch_list,
          "CRUCIBLE_TOOLCHAIN=" + sha256_hex(toolchain() + "\n" + options_.arch).substr(0, 32)};
}

result<compile_outcome> compile_cache::prepare(const std::string& source, const std::string& task_source,
                                               const worker_environment& env,
                                               const std::filesystem::path& scratch_root,
                                               const std::vector<int>& cores) {
  compile_outcome out;
  out.needed = needs_compile(source);
  if (!out.needed) return out;
  out.key = key(source);
  const auto entry = options_.root / out.key;
  out.extensions_dir = entry / "ext";
  std::error_code ec;
  std::filesystem::create_directories(out.extensions_dir, ec);
  if (ec) return make_error(errc::io, fmt::format("cannot create {}: {}", out.extensions_dir.string(), ec.message()));
  file_lock lock(options_.root / (out.key + ".lock"));
  const auto status_file = entry / "status";
  if (std::filesystem::exists(status_file)) {
    ++hits_;
    out.hit = true;
    std::string s = read_file(status_file);
    if (s.rfind("ok", 0) == 0) return out;
    out.ok = false;
    out.error_kind = s.rfind("failed:syntax", 0) == 0 ? sbx::ErrorKind::Syntax : sbx::ErrorKind::Compile;
    out.error = s.substr(std::min(s.size(), s.find('\n') + 1));
    return out;
  }
  ++misses_;
  pool_.acquire();
  struct release {
    std::counting_semaphore<64>& p;
    ~release() { p.release(); }
  } release_pool{pool_};

  auto scratch = scratch_dir::create(scratch_root, "compile");
  if (!scratch) return scratch.error();
  worker_start how;
  how.env = env;
  how.scratch = scratch->path();
  how.writable = {entry};
  how.limits = options_.limits;
  if (!cores.empty()) how.limits.cores = cores;
  how.cuda_visible_devices = "";
  how.extra_env = worker_env();
  how.extra_env.push_back("MAX_JOBS=2");
  auto session = worker_session::start(how);
  if (!session) return session.error();
  const auto deadline = clock_type::now() + std::chrono::milliseconds(static_cast<long long>(options_.timeout_s * 1000));
  auto reply = session->compile(source, "candidate", out.extensions_dir.string(), deadline);
  if (!reply) {
    out.ok = false;
    out.timed_out = reply.error().code == errc::timeout;
    out.crashed = !out.timed_out;
    out.error = reply.error().message + "\n" + session->process().log_tail();
    return out;
  }
  if (reply->ok) {
    // Stage 1 only builds more: whatever it does (a CUDA kernel cannot run
    // here, a constructor may want the GPU), the candidate imported.
    if (!task_source.empty()) (void)session->compile(source, "candidate", out.extensions_dir.string(), deadline, task_source);
    session->shutdown();
    write_file(status_file, "ok\n");
    return out;
  }
  session->shutdown();
  if (reply->error_kind == sbx::ErrorKind::Compile || reply->error_kind == sbx::ErrorKind::Syntax) {
    out.ok = false;
    out.error_kind = reply->error_kind;
    out.error = reply->error;
    write_file(status_file, fmt::format("failed:{}\n{}", reply->error_kind == sbx::ErrorKind::Syntax ? "syntax" : "compile",
                                        reply->error));
    return out;
  }
  // The top level raised for another reason: not cached; the timing worker
  // meets the same error when it loads the candidate and reports it.
  return out;
}

}  // namespace crucible::evaluator
