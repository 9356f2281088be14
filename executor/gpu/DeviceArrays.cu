// Device arrays and streams of the CUDA compute layer: allocation, upload and
// download with element conversion, index arrays; see DeviceOps.h.
//
// This file launches no kernel.
#include "executor/gpu/DeviceSupport.cuh"

namespace shardcheck::gpu {

int deviceCount() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError(); // clear the (non-sticky) error
    return 0;
  }
  return count;
}

// ---------------------------------------------------------------------------
// 2. Arrays and streams
// ---------------------------------------------------------------------------

DeviceArray allocateArray(int gpu, ElementType type, int64_t count) {
  if (count < 0)
    badArgument("negative element count " + std::to_string(count));
  DeviceArray array{gpu, type, count, nullptr};
  if (count == 0)
    return array;
  DeviceGuard guard(gpu);
  void *p = nullptr;
  SC_CUDA(cudaMalloc(&p, array.bytes()));
  // Owned from here on: the deleter frees it on its GPU whatever happens next.
  array.data = std::shared_ptr<void>(p, [gpu](void *q) {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(gpu);
    cudaFree(q);
    cudaSetDevice(previous);
  });
  SC_CUDA(cudaMemsetAsync(p, 0, array.bytes(), nullptr));
  SC_CUDA(cudaStreamSynchronize(nullptr));
  return array;
}

void uploadArray(const DeviceArray &array, const std::vector<double> &values, Stream stream) {
  if (static_cast<int64_t>(values.size()) != array.count)
    badArgument("uploadArray: " + std::to_string(values.size()) + " values for " +
                std::to_string(array.count) + " elements");
  if (array.count == 0)
    return;
  size_t size = elementSize(array.type);
  std::vector<unsigned char> bytes(array.bytes());
  for (size_t i = 0; i < values.size(); ++i)
    encodeElement(values[i], array.type, bytes.data() + i * size);
  DeviceGuard guard(array.gpu);
  SC_CUDA(cudaMemcpyAsync(array.ptr(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice,
                          cudaStreamOf(stream)));
  SC_CUDA(cudaStreamSynchronize(cudaStreamOf(stream)));
}

std::vector<double> downloadArray(const DeviceArray &array, Stream stream) {
  std::vector<double> values(static_cast<size_t>(array.count));
  if (array.count == 0)
    return values;
  std::vector<unsigned char> bytes(array.bytes());
  DeviceGuard guard(array.gpu);
  SC_CUDA(cudaMemcpyAsync(bytes.data(), array.ptr(), bytes.size(), cudaMemcpyDeviceToHost,
                          cudaStreamOf(stream)));
  SC_CUDA(cudaStreamSynchronize(cudaStreamOf(stream)));
  size_t size = elementSize(array.type);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = decodeElement(array.type, bytes.data() + i * size);
  return values;
}

DeviceArray uploadIndices(int gpu, const std::vector<int64_t> &indices) {
  DeviceArray array = allocateArray(gpu, ElementType::I64, static_cast<int64_t>(indices.size()));
  if (indices.empty())
    return array;
  DeviceGuard guard(gpu);
  SC_CUDA(cudaMemcpy(array.ptr(), indices.data(), array.bytes(), cudaMemcpyHostToDevice));
  return array;
}

Stream createStream(int gpu) {
  DeviceGuard guard(gpu);
  cudaStream_t s = nullptr;
  SC_CUDA(cudaStreamCreate(&s));
  return s;
}

void synchronize(int gpu, Stream stream) {
  DeviceGuard guard(gpu);
  SC_CUDA(cudaStreamSynchronize(cudaStreamOf(stream)));
}

void destroyStream(int gpu, Stream stream) {
  releaseHandle(gpu, stream);
  if (!stream)
    return;
  DeviceGuard guard(gpu);
  SC_CUDA(cudaStreamDestroy(cudaStreamOf(stream)));
}

} // namespace shardcheck::gpu
