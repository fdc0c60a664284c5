/* The native half of stream_fence.py: the fence's event operations in one
 * native loop instead of one Python call each.
 *
 * The fence takes one driver call per pool stream at the start of a timed
 * call and two at its end (128 streams on an H200: 384 calls a timed call). From
 * Python through torch's wrappers that was 1.25 ms of host time a round, and
 * as much again of the sleep sized from it (docs/benchmarks.md, issue 18);
 * here it is the driver's own cost.
 *
 * It links to no CUDA library: the driver (libcuda.so.1, which torch has already
 * loaded) is opened at make time, so the library builds on machines without
 * CUDA and fails there with a clear code instead. Stream and event handles
 * are torch's (Stream.cuda_stream, Event.cuda_event): CUstream and CUevent
 * are the runtime's cudaStream_t and cudaEvent_t.
 *
 * Who calls it: stream_fence.py through ctypes, from the worker's one thread,
 * with the worker's CUDA context current. Built as crucible_stream_fence
 * (actors/evaluator/CMakeLists.txt); the worker finds it through
 * CRUCIBLE_STREAM_FENCE, which worker_session sets.
 */
#include <dlfcn.h>

#include <cstdint>
#include <new>
#include <vector>

namespace {

using cu_result = int;
using cu_stream = void*;
using cu_event = void*;

constexpr unsigned cu_event_disable_timing = 0x2;
// Returned when libcuda.so.1 or one of its functions cannot be found, or
// memory cannot be had (CUresult values are all below these).
constexpr int fence_no_driver = 100000, fence_no_memory = 100001;

cu_result (*wait_event)(cu_stream, cu_event, unsigned) = nullptr;
cu_result (*record)(cu_event, cu_stream) = nullptr;
cu_result (*create)(cu_event*, unsigned) = nullptr;

template <typename F>
bool find(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

int load_driver() {
  if (wait_event) return 0;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) return fence_no_driver;
  if (!find(lib, "cuEventCreate", create) || !find(lib, "cuEventRecord", record) ||
      !find(lib, "cuStreamWaitEvent", wait_event)) {
    wait_event = nullptr;
    return fence_no_driver;
  }
  return 0;
}

}  // namespace

struct crucible_fence {
  std::vector<cu_stream> streams;
  std::vector<cu_event> events;  // one per stream, recorded on it at close
};

extern "C" {

/* A fence over `n` streams, in *out; 0 or the first error (a CUresult, or
 * fence_no_driver / fence_no_memory). The fence lives as long as the worker. */
int crucible_fence_make(const std::uintptr_t* streams, int n, crucible_fence** out) {
  *out = nullptr;
  if (const int rc = load_driver()) return rc;
  auto* f = new (std::nothrow) crucible_fence;
  if (!f) return fence_no_memory;
  for (int i = 0; i < n; ++i) {
    cu_event e = nullptr;
    if (const int rc = create(&e, cu_event_disable_timing)) {
      delete f;
      return rc;
    }
    f->streams.push_back(reinterpret_cast<cu_stream>(streams[i]));
    f->events.push_back(e);
  }
  *out = f;
  return 0;
}

/* After the start event is recorded on the calling stream, before the call:
 * every stream waits for it. */
int crucible_fence_open(crucible_fence* f, std::uintptr_t start) {
  for (cu_stream s : f->streams)
    if (const int rc = wait_event(s, reinterpret_cast<cu_event>(start), 0)) return rc;
  return 0;
}

/* After the call, before the end event on `calling`: the calling stream
 * waits for every stream's work so far. */
int crucible_fence_close(crucible_fence* f, std::uintptr_t calling) {
  for (std::size_t i = 0; i < f->streams.size(); ++i) {
    int rc = record(f->events[i], f->streams[i]);
    if (!rc) rc = wait_event(reinterpret_cast<cu_stream>(calling), f->events[i], 0);
    if (rc) return rc;
  }
  return 0;
}

}  // extern "C"
