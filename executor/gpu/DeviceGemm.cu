// cuBLAS matrix products of the CUDA compute layer and the handle cache;
// see DeviceOps.h.
//
// This file launches no kernel of its own.
#include "executor/gpu/DeviceSupport.cuh"

namespace shardcheck::gpu {

// ---------------------------------------------------------------------------
// 6. cuBLAS
// ---------------------------------------------------------------------------

namespace {

std::mutex &handleMutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::pair<int, Stream>, cublasHandle_t> &handles() {
  static std::map<std::pair<int, Stream>, cublasHandle_t> map;
  return map;
}

/// Each handle's workspace (device memory, freed with the handle).
std::map<cublasHandle_t, void *> &workspaces() {
  static std::map<cublasHandle_t, void *> map;
  return map;
}

/// cuBLAS's recommended workspace (cublasSetWorkspace): 32 MiB from Hopper
/// on, 4 MiB before. Without one, cuBLAS may pass over kernels that need it.
size_t workspaceBytes(int gpu) {
  int major = 0;
  SC_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, gpu));
  return (major >= 9 ? 32u : 4u) << 20;
}

void destroyHandle(cublasHandle_t handle) {
  cublasDestroy(handle);
  if (auto it = workspaces().find(handle); it != workspaces().end()) {
    cudaFree(it->second);
    workspaces().erase(it);
  }
}

/// The cached handle of (gpu, stream), made on first use.
cublasHandle_t handleFor(int gpu, Stream stream) {
  std::lock_guard<std::mutex> lock(handleMutex());
  auto key = std::make_pair(gpu, stream);
  if (auto it = handles().find(key); it != handles().end())
    return it->second;
  DeviceGuard guard(gpu);
  cublasHandle_t handle = nullptr;
  SC_CUBLAS(cublasCreate(&handle));
  size_t bytes = workspaceBytes(gpu);
  void *workspace = nullptr;
  cudaError_t allocated = cudaMalloc(&workspace, bytes);
  if (allocated != cudaSuccess) {
    cublasDestroy(handle);
    SC_CUDA(allocated);
  }
  workspaces()[handle] = workspace;
  cublasStatus_t set = cublasSetStream(handle, cudaStreamOf(stream));
  if (set == CUBLAS_STATUS_SUCCESS)
    set = cublasSetWorkspace(handle, workspace, bytes);
  if (set != CUBLAS_STATUS_SUCCESS) {
    destroyHandle(handle);
    SC_CUBLAS(set);
  }
  handles()[key] = handle;
  return handle;
}

} // namespace

void releaseHandle(int gpu, Stream stream) {
  std::lock_guard<std::mutex> lock(handleMutex());
  auto it = handles().find(std::make_pair(gpu, stream));
  if (it == handles().end())
    return;
  cublasHandle_t handle = it->second;
  handles().erase(it);
  DeviceGuard guard(gpu);
  destroyHandle(handle);
}

namespace {

cudaDataType_t cublasTypeOf(ElementType t) {
  switch (t) {
  case ElementType::F64:
    return CUDA_R_64F;
  case ElementType::F32:
    return CUDA_R_32F;
  case ElementType::F16:
    return CUDA_R_16F;
  case ElementType::BF16:
    return CUDA_R_16BF;
  default:
    badArgument(std::string("gemmRowMajor: no matrix product for ") + elementTypeName(t));
  }
}

/// Elements a batched operand spans: (batch - 1) * stride + rows * cols.
int64_t spanOf(int64_t batch, int64_t stride, int64_t rows, int64_t cols) {
  if (batch == 0 || rows * cols == 0)
    return 0;
  return (batch - 1) * stride + rows * cols;
}

void checkGemm(int gpu, const DeviceArray &a, const DeviceArray &b, const DeviceArray &c,
               int64_t batch, int64_t m, int64_t n, int64_t k, int64_t strideA, int64_t strideB,
               int64_t strideC) {
  if (a.type != b.type || a.type != c.type)
    badArgument("gemmRowMajor: a, b and c must have one element type");
  cublasTypeOf(a.type);
  if (a.gpu != gpu || b.gpu != gpu || c.gpu != gpu)
    badArgument("gemmRowMajor: a, b and c must be on GPU " + std::to_string(gpu));
  for (int64_t v : {batch, m, n, k, strideA, strideB, strideC})
    if (v < 0)
      badArgument("gemmRowMajor: negative size or stride");
  for (int64_t v : {batch, m, n, k})
    if (v > INT_MAX)
      badArgument("gemmRowMajor: a size exceeds cuBLAS's int range");
  if (batch > 1 && m * n > 0 && strideC < m * n)
    badArgument("gemmRowMajor: batches of C overlap (strideC < m * n)");
  if (a.count < spanOf(batch, strideA, m, k) || b.count < spanOf(batch, strideB, k, n) ||
      c.count < spanOf(batch, strideC, m, n))
    badArgument("gemmRowMajor: an operand is smaller than its batches span");
}

} // namespace

void gemmRowMajor(int gpu, Stream stream, const DeviceArray &a, const DeviceArray &b,
                  const DeviceArray &c, int64_t batch, int64_t m, int64_t n, int64_t k,
                  bool transposeB, int64_t strideA, int64_t strideB, int64_t strideC) {
  checkGemm(gpu, a, b, c, batch, m, n, k, strideA, strideB, strideC);
  if (batch == 0 || m == 0 || n == 0)
    return;
  DeviceGuard guard(gpu);
  size_t size = elementSize(c.type);
  if (k == 0) { // an empty sum: C = 0
    for (int64_t i = 0; i < batch; ++i)
      SC_CUDA(cudaMemsetAsync(static_cast<char *>(c.ptr()) + i * strideC * size, 0, m * n * size,
                              cudaStreamOf(stream)));
    return;
  }
  // Row-major C = A x op(B) is column-major C^T = op(B)^T x A^T: B's
  // row-major storage read column-major is B^T, A's is A^T.
  cublasHandle_t handle = handleFor(gpu, stream);
  cudaDataType_t type = cublasTypeOf(c.type);
  bool f64 = c.type == ElementType::F64;
  float alphaF = 1, betaF = 0;
  double alphaD = 1, betaD = 0;
  const void *alpha = f64 ? static_cast<const void *>(&alphaD) : &alphaF;
  const void *beta = f64 ? static_cast<const void *>(&betaD) : &betaF;
  cublasComputeType_t compute = f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  if (batch == 1) { // cublasGemmEx: the call PyTorch's linear and matmul make.
    SC_CUBLAS(cublasGemmEx(handle, transposeB ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N,
                           static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), alpha,
                           b.ptr(), type, static_cast<int>(transposeB ? k : n), a.ptr(), type,
                           static_cast<int>(k), beta, c.ptr(), type, static_cast<int>(n), compute,
                           CUBLAS_GEMM_DEFAULT));
    return;
  }
  SC_CUBLAS(cublasGemmStridedBatchedEx(
      handle, transposeB ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n),
      static_cast<int>(m), static_cast<int>(k), alpha, b.ptr(), type,
      static_cast<int>(transposeB ? k : n), strideB, a.ptr(), type, static_cast<int>(k), strideA,
      beta, c.ptr(), type, static_cast<int>(n), strideC, static_cast<int>(batch), compute,
      CUBLAS_GEMM_DEFAULT));
}

void releaseGpuResources() {
  std::lock_guard<std::mutex> lock(handleMutex());
  for (auto &[key, handle] : handles()) {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(key.first);
    destroyHandle(handle);
    cudaSetDevice(previous);
  }
  handles().clear();
}

} // namespace shardcheck::gpu
