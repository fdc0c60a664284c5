// Linked into policy_model_test: on SIGSEGV, SIGBUS, SIGFPE, SIGILL or
// SIGABRT, prints the faulting address and a backtrace (module, symbol,
// offset; pipe through c++filt to demangle) to stderr, then dies of the same
// signal. The GPU machines have no gdb; this tells where a crash was.
// doctest installs its own handler around each test case; it reports the
// test case, restores this one and re-raises, so both speak.
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>

namespace {

void write_text(const char* text) {
  const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

// "module(symbol+offset) [module base + offset]" of a code address, or false.
bool describe(const void* address, char* out, std::size_t size) {
  Dl_info info{};
  if (::dladdr(address, &info) == 0 || info.dli_fname == nullptr) return false;
  const auto base = reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  const auto sym = reinterpret_cast<std::uintptr_t>(info.dli_saddr);
  std::snprintf(out, size, "%s(%s+0x%lx) [+0x%lx]", info.dli_fname, info.dli_sname ? info.dli_sname : "?",
                static_cast<unsigned long>(info.dli_sname ? at - sym : 0), static_cast<unsigned long>(at - base));
  return true;
}

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  char line[1024];
  std::snprintf(line, sizeof line, "\n*** policy_model_test: signal %d (%s), fault address %p; backtrace:\n", sig,
                ::strsignal(sig), info ? info->si_addr : nullptr);
  write_text(line);
  void* frames[128];
  const int n = ::backtrace(frames, 128);
  ::backtrace_symbols_fd(frames, n, STDERR_FILENO);
#if defined(__x86_64__)
  // When the program counter itself is bad (a call through a broken
  // pointer) the unwinder stops at once: print the faulting instruction and
  // every code address among the top stack words (return addresses).
  if (context) {
    const auto* uc = static_cast<const ucontext_t*>(context);
    const auto rip = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
    const auto rsp = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
    char where[768];
    std::snprintf(line, sizeof line, "*** rip %p %s\n*** code addresses on the stack from rsp %p:\n",
                  reinterpret_cast<void*>(rip),
                  describe(reinterpret_cast<void*>(rip), where, sizeof where) ? where : "(not in any module)",
                  reinterpret_cast<void*>(rsp));
    write_text(line);
    const auto* words = reinterpret_cast<const std::uintptr_t*>(rsp);
    for (int i = 0; i < 256; ++i) {
      const auto word = words[i];
      if (word < 0x10000) continue;
      if (!describe(reinterpret_cast<void*>(word), where, sizeof where)) continue;
      std::snprintf(line, sizeof line, "  [rsp+%d] %s\n", 8 * i, where);
      write_text(line);
    }
  }
#endif
  write_text("*** end of backtrace\n");
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

struct install_handler {
  install_handler() {
    // Its own stack, so that a stack overflow can be reported too.
    static char alternate[1 << 16];
    stack_t ss{};
    ss.ss_sp = alternate;
    ss.ss_size = sizeof alternate;
    ::sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_sigaction = on_fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    ::sigemptyset(&sa.sa_mask);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(sig, &sa, nullptr);
    // backtrace() loads libgcc on first use: do it now, not inside a handler.
    void* warm[1];
    ::backtrace(warm, 1);
  }
} installed;

}  // namespace
