#include "actors/policy/decode_runner.hpp"

#include <torch/version.h>

#include <algorithm>
#include <mutex>

// CUDA graphs: LibTorch 2 or newer, built with CUDA (its headers need the
// CUDA runtime's). Debian's LibTorch 1.13 (CPU) decodes eagerly.
#if defined(TORCH_VERSION_MAJOR) && TORCH_VERSION_MAJOR >= 2 && __has_include(<cuda_runtime_api.h>) && \
    __has_include(<ATen/cuda/CUDAGraph.h>)
#define CRUCIBLE_HAVE_CUDA_GRAPHS 1
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#else
#define CRUCIBLE_HAVE_CUDA_GRAPHS 0
#endif

namespace crucible::policy {

namespace {
constexpr std::size_t kMaxIdleRunners = 4;

#if CRUCIBLE_HAVE_CUDA_GRAPHS
// Ends a capture that failed half-way, so that the stream (and the device's
// other work) is usable again; the partial graph is dropped.
void end_failed_capture(cudaStream_t stream) {
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capturing) != cudaSuccess || capturing == cudaStreamCaptureStatusNone) return;
  cudaGraph_t partial = nullptr;
  cudaStreamEndCapture(stream, &partial);
  if (partial) cudaGraphDestroy(partial);
  cudaGetLastError();
}
#endif
}  // namespace

bool cuda_graphs_available() { return CRUCIBLE_HAVE_CUDA_GRAPHS != 0 && torch::cuda::is_available(); }

std::int64_t runner_capacity(std::int64_t capacity) { return (capacity + 511) / 512 * 512; }

struct decode_runner::graph_state {
#if CRUCIBLE_HAVE_CUDA_GRAPHS
  at::cuda::CUDAGraph graph;
#endif
};

decode_runner::decode_runner(causal_lm& m, std::int64_t b, std::int64_t c, bool fused)
    : model(m), batch(b), capacity(c), fused_kernels(fused), cache(m.make_cache(b, c)) {
  const auto longs = torch::TensorOptions().dtype(torch::kInt64).device(m.device());
  ids = torch::zeros({batch, 1}, longs);
  positions = torch::zeros({batch, 1}, longs);
  slot = torch::zeros({1}, longs);
  key_mask = torch::ones({batch, capacity}, longs.dtype(torch::kBool));
}

decode_runner::~decode_runner() = default;

void decode_runner::start(const torch::Tensor& prompt_mask) {
  const std::int64_t n = prompt_mask.size(1);
  CRUCIBLE_CHECK(prompt_mask.size(0) == batch && n <= capacity, "prompt mask larger than the runner");
  for (auto& k : cache.keys) k.zero_();
  for (auto& v : cache.values) v.zero_();
  cache.length = 0;
  key_mask.narrow(1, 0, n).copy_(prompt_mask);
  if (n < capacity) key_mask.narrow(1, n, capacity - n).fill_(true);
}

torch::Tensor decode_runner::step(const torch::Tensor& tokens, const torch::Tensor& now, std::int64_t at) {
  CRUCIBLE_CHECK(at >= 0 && at < capacity, "decode slot past the runner's capacity");
  ids.copy_(tokens.view({batch, 1}));
  positions.copy_(now.view({batch, 1}));
  slot.fill_(at);
#if CRUCIBLE_HAVE_CUDA_GRAPHS
  if (model.device().is_cuda()) {
    if (!graph) {
      // Capture on a side stream after one eager warm-up there (cuBLAS
      // handles and workspaces must exist before capture). The warm-up writes
      // the same keys and values as this step will.
      const auto index = model.device().index();
      auto current = at::cuda::getCurrentCUDAStream(index);
      auto side = at::cuda::getStreamFromPool(false, index);
      current.synchronize();
      auto state = std::make_unique<graph_state>();
      {
        c10::cuda::CUDAStreamGuard guard(side);
        model.decode_step(ids, positions, slot, key_mask, cache, fused_kernels);
        side.synchronize();
        // Rollouts of one process decode on one device from their own
        // threads: one capture at a time, in thread-local mode, so that the
        // others' allocations and synchronisations stay legal meanwhile.
        static std::mutex capture_mutex;
        std::lock_guard<std::mutex> one_capture(capture_mutex);
        state->graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
        try {
          logits = model.decode_step(ids, positions, slot, key_mask, cache, fused_kernels);
        } catch (...) {
          end_failed_capture(side.stream());
          throw;
        }
        state->graph.capture_end();
      }
      side.synchronize();
      graph = std::move(state);
    }
    graph->graph.replay();
    return logits;
  }
#endif
  return model.decode_step(ids, positions, slot, key_mask, cache, fused_kernels);
}

std::shared_ptr<decode_runner> causal_lm::take_runner(std::int64_t batch, std::int64_t capacity, bool fused_kernels) {
  {
    std::lock_guard<std::mutex> lock(runners_mutex_);
    for (auto it = idle_runners_.rbegin(); it != idle_runners_.rend(); ++it) {
      if ((*it)->batch == batch && (*it)->capacity == capacity && (*it)->fused_kernels == fused_kernels) {
        auto runner = *it;
        idle_runners_.erase(std::next(it).base());
        return runner;
      }
    }
  }
  return std::make_shared<decode_runner>(*this, batch, capacity, fused_kernels);
}

void causal_lm::return_runner(std::shared_ptr<decode_runner> runner) {
  std::lock_guard<std::mutex> lock(runners_mutex_);
  idle_runners_.push_back(std::move(runner));
  if (idle_runners_.size() > kMaxIdleRunners) idle_runners_.erase(idle_runners_.begin());
}

}  // namespace crucible::policy
