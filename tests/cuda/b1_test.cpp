// b1 or-and on CUDA (src/cuda/bits.cu on the tensor cores' bits route) against the CPU's gemm_b1,
// which tests/cpu/bits_test.cpp checks against the u8 reference: odd and rectangular shapes, rows
// with padding words, garbage tail bits in the inputs, u8 and b1 C, α/β; and the refusals.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "bit_matrices.hpp"
#include "cuda_testing.hpp"
#include "ringmm/bits.hpp"
#include "ringmm_testing.hpp"

namespace ringmm {
namespace {

using testing::BitBuffer;
using testing::DeviceCopy;

BitBuffer random_bits(index_t rows, index_t cols, index_t k, index_t pad_words, std::mt19937_64& rng) {
  return testing::bits_of(testing::random_matrix<OrAnd>(rows, cols, Layout::row_major, 0, rng, k), pad_words, rng);
}

template <class Word> BitMatrixView<Word> on_device(const DeviceCopy<bit_word>& d, const BitMatrixView<Word>& v) {
  return {d.ptr, v.rows, v.cols, v.stride_words};
}

struct Shape {
  index_t m, n, k;
};

TEST(CudaB1, OrAndMatchesTheCpu) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(21);
  const Shape shapes[] = {{0, 5, 7},      {1, 1, 1},       {7, 33, 0},      {33, 7, 129},   {127, 129, 65},
                          {129, 127, 1025}, {1000, 1025, 77}, {1025, 1000, 1000}, {1, 300, 4099}, {300, 2, 64}};
  Context cpu, cuda;
  cpu.backend = Backend::cpu;
  cuda.backend = Backend::cuda;
  int case_id = 0;
  for (const Shape& s : shapes) {
    for (bool beta : {false, true}) {
      const index_t pad = case_id++ % 3;
      SCOPED_TRACE("m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
                   " pad=" + std::to_string(pad) + (beta ? " beta" : ""));
      const BitBuffer a = random_bits(s.m, s.k, s.k, pad, rng), bt = random_bits(s.n, s.k, s.k, pad, rng);
      const DeviceCopy<bit_word> da(a.words), dbt(bt.words);
      const bool alpha = case_id % 4 != 1;

      // u8 C, column-major with a padded leading dimension.
      testing::HostMatrix<std::uint8_t> c0 = testing::random_matrix<OrAnd>(s.m, s.n, Layout::col_major, 3, rng, 4);
      testing::HostMatrix<std::uint8_t> want = c0, got = c0;
      gemm_b1(cpu, a.cview(), bt.cview(), want.view, alpha, beta);
      const DeviceCopy<std::uint8_t> dc(got.storage);
      gemm_b1(cuda, on_device(da, a.cview()), on_device(dbt, bt.cview()), dc.on_device(got.view), alpha, beta);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      dc.to_host(got.storage);
      EXPECT_EQ(got.storage, want.storage) << "u8 C";

      // b1 C with a padding word (which must survive) and garbage tail bits.
      const BitBuffer c_bits = random_bits(s.m, s.n, 4, 1, rng);
      BitBuffer want_bits = c_bits, got_bits = c_bits;
      gemm_b1(cpu, a.cview(), bt.cview(), want_bits.view, alpha, beta);
      const DeviceCopy<bit_word> dcb(got_bits.words);
      gemm_b1(cuda, on_device(da, a.cview()), on_device(dbt, bt.cview()), on_device(dcb, got_bits.view), alpha, beta);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      dcb.to_host(got_bits.words);
      EXPECT_EQ(got_bits.words, want_bits.words) << "b1 C";
    }
  }
}

// automatic runs on CUDA for device memory and on the CPU for host memory; CUDA refuses host memory.
TEST(CudaB1, BackendFollowsTheMemory) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(22);
  const BitBuffer a = random_bits(40, 300, 300, 0, rng), bt = random_bits(50, 300, 300, 0, rng);
  testing::HostMatrix<std::uint8_t> want(40, 50, Layout::row_major), host(40, 50, Layout::row_major);
  Context cpu, automatic, cuda;
  cpu.backend = Backend::cpu;
  cuda.backend = Backend::cuda;
  gemm_b1(cpu, a.cview(), bt.cview(), want.view);
  gemm_b1(automatic, a.cview(), bt.cview(), host.view);
  EXPECT_EQ(host.storage, want.storage);
  const DeviceCopy<bit_word> da(a.words), dbt(bt.words);
  testing::HostMatrix<std::uint8_t> got(40, 50, Layout::row_major);
  const DeviceCopy<std::uint8_t> dc(got.storage);
  gemm_b1(automatic, on_device(da, a.cview()), on_device(dbt, bt.cview()), dc.on_device(got.view));
  dc.to_host(got.storage);
  EXPECT_EQ(got.storage, want.storage);
  // A host A beside device B and C: refused by CUDA, and by automatic (neither backend reads both).
  for (const Context& ctx : {cuda, automatic}) {
    try {
      gemm_b1(ctx, a.cview(), on_device(dbt, bt.cview()), dc.on_device(got.view));
      ADD_FAILURE() << to_string(ctx.backend) << " accepted a host A beside device B and C";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::unsupported) << e.what();
      EXPECT_EQ(e.subject(), "A") << e.what();
    }
  }
}

}  // namespace
}  // namespace ringmm
