// Linked into policy_model_test: on SIGSEGV, SIGBUS, SIGFPE, SIGILL or
// SIGABRT, prints the faulting address and a backtrace (module, symbol,
// offset; pipe through c++filt to demangle) to stderr, then dies of the same
// signal. The GPU machines have no gdb; this tells where a crash was.
// doctest installs its own handler around each test case; it reports the
// test case, restores this one and re-raises, so both speak.
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>

namespace {

void write_text(const char* text) {
  const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

void on_fatal_signal(int sig, siginfo_t* info, void*) {
  char line[160];
  std::snprintf(line, sizeof line, "\n*** policy_model_test: signal %d (%s), fault address %p; backtrace:\n", sig,
                ::strsignal(sig), info ? info->si_addr : nullptr);
  write_text(line);
  void* frames[128];
  const int n = ::backtrace(frames, 128);
  ::backtrace_symbols_fd(frames, n, STDERR_FILENO);
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
