// gpu-pointwise-bench: the vectorized pointwise path of the GPU backend
// (executor/gpu/DeviceOps.h) against a device-to-device copy, on GPU 0.
//
// For buffer sizes from 1 MiB to 1 GiB (powers of 4) it times, with CUDA
// events, cudaMemcpyAsync device-to-device and launchElementwise(relu) in F32
// and BF16 over the same bytes, and prints bytes, GB/s (bytes read plus bytes
// written, counted the same way for all three) and relu's ratio to the copy.
// Each figure is the median of `--iterations` timings (after warm-up); small
// sizes repeat the operation inside one timing so that launch overhead does
// not dominate. Exit status: 0, or 1 on a CUDA error.
//
// Build: nvcc -std=c++20 -arch=sm_90 -O3 -I. bench/gpu_pointwise_bench.cu
//          executor/gpu/Device*.cu executor/gpu/OpCodes.cpp -o gpu-pointwise-bench -lcublas
// Run:   gpu-pointwise-bench [--iterations N] [--max-mib M]
#include "executor/gpu/DeviceOps.h"
#include "executor/gpu/OpCodes.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace g = shardcheck::gpu;

namespace {

void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    throw g::GpuError(std::string(what) + ": " + cudaGetErrorString(e));
}

/// Median seconds of one run of `op`, timed `iterations` times in groups of
/// `repeat` runs, after `warmup` untimed runs.
double medianSeconds(const std::function<void()> &op, cudaStream_t stream, int iterations,
                     int repeat, int warmup = 3) {
  for (int i = 0; i < warmup; ++i)
    op();
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    for (int r = 0; r < repeat; ++r)
      op();
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    times.push_back(ms * 1e-3 / repeat);
  }
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// GB/s of relu over `bytes` of `type` (read + write).
double reluRate(shardcheck::ElementType type, size_t bytes, g::Stream stream, int iterations,
                int repeat) {
  int64_t count = static_cast<int64_t>(bytes / shardcheck::elementSize(type));
  g::DeviceArray in = g::allocateArray(0, type, count);
  g::DeviceArray out = g::allocateArray(0, type, count);
  g::ElementwiseOp relu{g::ElementwiseOp::Kind::Unary, g::kUnaryRelu, false};
  std::vector<g::ElementwiseOperand> operands = {{&in, nullptr, 0}};
  if (!g::isVectorizedElementwise(relu, operands, out))
    throw std::runtime_error("relu did not take the vectorized path");
  double s = medianSeconds([&] { g::launchElementwise(relu, operands, out, stream); },
                           static_cast<cudaStream_t>(stream), iterations, repeat);
  return 2.0 * bytes / s / 1e9;
}

double copyRate(size_t bytes, g::Stream stream, int iterations, int repeat) {
  g::DeviceArray in = g::allocateArray(0, shardcheck::ElementType::U8, static_cast<int64_t>(bytes));
  g::DeviceArray out =
      g::allocateArray(0, shardcheck::ElementType::U8, static_cast<int64_t>(bytes));
  auto s = static_cast<cudaStream_t>(stream);
  double t = medianSeconds(
      [&] {
        check(cudaMemcpyAsync(out.ptr(), in.ptr(), bytes, cudaMemcpyDeviceToDevice, s),
              "cudaMemcpyAsync");
      },
      s, iterations, repeat);
  return 2.0 * bytes / t / 1e9;
}

int run(int iterations, size_t maxBytes) {
  check(cudaSetDevice(0), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("GPU 0: %s, %d SMs; median of %d timings; GB/s = (read + written bytes) / time\n",
              prop.name, prop.multiProcessorCount, iterations);
  std::printf("%12s %12s %14s %8s %14s %8s\n", "bytes", "copy GB/s", "relu f32 GB/s", "ratio",
              "relu bf16 GB/s", "ratio");
  g::Stream stream = g::createStream(0);
  for (size_t bytes = size_t(1) << 20; bytes <= maxBytes; bytes *= 4) {
    // About 256 MiB of traffic per timing for the small sizes.
    int repeat = static_cast<int>(std::max<size_t>(1, (size_t(256) << 20) / bytes));
    double copy = copyRate(bytes, stream, iterations, repeat);
    double f32 = reluRate(shardcheck::ElementType::F32, bytes, stream, iterations, repeat);
    double bf16 = reluRate(shardcheck::ElementType::BF16, bytes, stream, iterations, repeat);
    std::printf("%12zu %12.1f %14.1f %8.3f %14.1f %8.3f\n", bytes, copy, f32, f32 / copy, bf16,
                bf16 / copy);
  }
  g::destroyStream(0, stream);
  g::releaseGpuResources();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  int iterations = 20;
  size_t maxMiB = 1024;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc)
      iterations = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--max-mib") && i + 1 < argc)
      maxMiB = static_cast<size_t>(std::max(1, std::atoi(argv[++i])));
    else {
      std::fprintf(stderr, "usage: %s [--iterations N] [--max-mib M]\n", argv[0]);
      return 2;
    }
  }
  try {
    return run(iterations, maxMiB << 20);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "gpu-pointwise-bench: %s\n", e.what());
    return 1;
  }
}
