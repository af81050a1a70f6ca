// b1 or-and on CUDA (gemm_b1 in ringmm/bits.hpp): the bits are already the tensor-core route's
// operands (ringmm/cuda/or_and_mma.cuh), packed along K in the same order, so they are only
// copied into the kernel's padded 32-bit rows. A b1 C goes through a u8 0/1 staging matrix.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "ringmm/cuda/or_and_mma.cuh"
#include "ringmm/detail/bits.hpp"

namespace ringmm::cuda_detail {
namespace {

using or_and_mma::Packed;
using or_and_mma::Route;

// A b1 matrix (64-bit words) into rows_padded × words_padded 32-bit words; the tail bits past
// `cols`, which b1 readers ignore, and the padding are cleared.
__global__ void repack_b1_kernel(std::uint32_t* dst, index_t rows_padded, index_t words_padded,
                                 const std::uint64_t* src, index_t rows, index_t cols, index_t stride_words) {
  const index_t total = rows_padded * words_padded;
  for (index_t t = blockIdx.x * index_t(blockDim.x) + threadIdx.x; t < total; t += index_t(gridDim.x) * blockDim.x) {
    const index_t r = t / words_padded, w = t % words_padded, first = w * 32;
    std::uint32_t word = 0;
    if (r < rows && first < cols) {
      word = std::uint32_t(src[r * stride_words + w / 2] >> (32 * (w % 2)));
      if (cols - first < 32) word &= (1u << (cols - first)) - 1;
    }
    dst[t] = word;
  }
}

// tmp (rows × cols 0/1 bytes, row-major) into C's rows of bits, one ballot per 32 columns; the
// tail bits of each row's last word are written as zero.
__global__ void b1_from_bytes_kernel(std::uint64_t* c, index_t stride_words, const std::uint8_t* tmp, index_t rows,
                                     index_t cols) {
  const int lane = threadIdx.x % 32;
  const index_t halves = 2 * words_for_bits(cols), items = rows * halves;
  const index_t warps = index_t(gridDim.x) * blockDim.x / 32;
  for (index_t t = (blockIdx.x * index_t(blockDim.x) + threadIdx.x) / 32; t < items; t += warps) {
    const index_t i = t / halves, h = t % halves, j = h * 32 + lane;
    const std::uint32_t word = __ballot_sync(0xffffffffu, j < cols && tmp[i * cols + j] != 0);
    if (lane == 0) reinterpret_cast<std::uint32_t*>(c + i * stride_words)[h] = word;  // little-endian halves
  }
}

__global__ void bytes_from_b1_kernel(std::uint8_t* tmp, const std::uint64_t* c, index_t stride_words, index_t rows,
                                     index_t cols) {
  for (index_t t = blockIdx.x * index_t(blockDim.x) + threadIdx.x; t < rows * cols; t += index_t(gridDim.x) * blockDim.x) {
    const index_t i = t / cols, j = t % cols;
    tmp[t] = std::uint8_t((c[i * stride_words + j / 64] >> (j % 64)) & 1u);
  }
}

unsigned blocks_for(index_t threads) {
  return unsigned(std::max<index_t>(1, std::min<index_t>((threads + 255) / 256, 16 * index_t(multiprocessor_count()))));
}

Packed repack(const BitMatrixView<const bit_word>& x, index_t rows_padded, index_t words_padded, cudaStream_t stream) {
  Packed out;
  if (rows_padded * words_padded == 0) return out;
  out.words = DeviceBuffer<std::uint32_t>(std::size_t(rows_padded * words_padded), stream);
  repack_b1_kernel<<<blocks_for(rows_padded * words_padded), 256, 0, stream>>>(
      out.words.get(), rows_padded, words_padded, x.data, x.rows, x.cols, x.stride_words);
  check_launch("repack_b1_kernel");
  return out;
}

}  // namespace
}  // namespace ringmm::cuda_detail

namespace ringmm::detail {

bool gemm_b1_cuda(const Context& ctx, BitMatrixView<const bit_word> a, BitMatrixView<const bit_word> bt,
                  const MatrixView<std::uint8_t>* c_u8, const BitMatrixView<bit_word>* c_bits, bool alpha, bool beta) {
  using namespace cuda_detail;
  const void* c_data = c_u8 ? static_cast<const void*>(c_u8->data) : static_cast<const void*>(c_bits->data);
  const std::pair<const void*, const char*> operands[] = {{a.data, "A"}, {bt.data, "B"}, {c_data, "C"}};
  if (ctx.backend == Backend::cpu) return false;
  bool any_device = false;
  for (const auto& [pointer, name] : operands) any_device = any_device || (pointer && is_device_pointer(pointer));
  if (ctx.backend == Backend::automatic && !any_device) return false;  // host memory: the CPU's
  // Backend::cuda, or automatic with device memory among the operands: all of them must be.
  for (const auto& [pointer, name] : operands)
    if (pointer && !is_device_pointer(pointer))
      throw Error(Errc::unsupported, name,
                  std::string(name) + " is host memory: b1 products on the CUDA backend read device memory, and the "
                                      "CPU backend host memory; pass all operands in one of them");
  // The MMA's int32 counts of shared bits would wrap at 2³¹.
  if (a.cols >= index_t(0x7fffffff))
    throw Error(Errc::unsupported, "A",
                "K = " + std::to_string(a.cols) + " bits: b1 products on CUDA count in int32 and take K < 2^31");
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  const index_t m = a.rows, n = bt.rows, k = a.cols;
  if (m == 0 || n == 0) return true;
  // Rows repacked whole, zeros past K: everything launch() reads.
  const index_t words = or_and_mma::split_k(or_and_mma::k_words<Route::bits>(k)).pitch;
  const Packed pa = repack(a, round_up(m, or_and_mma::kTileM), words, stream);
  const Packed pb = repack(bt, round_up(n, or_and_mma::kTileN), words, stream);

  or_and_mma::KernelArgs args{};
  args.m = m, args.n = n, args.batch = 1, args.alpha = alpha, args.beta = beta;
  DeviceBuffer<std::uint8_t> staged;  // a b1 C's entries as 0/1 bytes, row-major
  if (c_u8) {
    const Strided<std::uint8_t> c = apply_op(Op::N, *c_u8);
    args.c = c.p, args.c_rs = c.rs, args.c_cs = c.cs;
  } else {
    staged = DeviceBuffer<std::uint8_t>(std::size_t(m * n), stream);
    if (beta) {
      bytes_from_b1_kernel<<<blocks_for(m * n), 256, 0, stream>>>(staged.get(), c_bits->data, c_bits->stride_words, m, n);
      check_launch("bytes_from_b1_kernel");
    }
    args.c = staged.get(), args.c_rs = n, args.c_cs = 1;
  }
  or_and_mma::launch<Route::bits>(args, pa, pb, or_and_mma::k_words<Route::bits>(k), stream);
  if (c_bits) {
    b1_from_bytes_kernel<<<blocks_for(m * 2 * words_for_bits(n) * 32), 256, 0, stream>>>(
        c_bits->data, c_bits->stride_words, staged.get(), m, n);
    check_launch("b1_from_bytes_kernel");
  }
  return true;
}

}  // namespace ringmm::detail
