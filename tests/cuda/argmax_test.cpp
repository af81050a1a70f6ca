// gemm_argmax on the CUDA backend against the CPU's (which tests/cpu/argmax_test.cpp checks
// against an oracle): identical C and K* on odd, transposed, strided and batched shapes, host and
// device pointers, ties, β carrying indexes across parts of K, for every pair whose ⊕ selects.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda_testing.hpp"
#include "nan_policy.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

template <class S> class CudaArgmax : public ::testing::Test {};
TYPED_TEST_SUITE(CudaArgmax, SelectingSemirings, SemiringNames);

Context on(Backend backend) {
  Context ctx;
  ctx.backend = backend;
  return ctx;
}

struct Shape {
  index_t m, n, k;
  Op op_a, op_b;
  Layout layout;
  index_t pad, batch;
  bool shared_a, device, beta;
};

template <class S> void check_shape(const Shape& s, std::mt19937_64& rng) {
  using T = typename S::value_type;
  const index_t ar = s.op_a == Op::N ? s.m : s.k, ac = s.op_a == Op::N ? s.k : s.m;
  const index_t br = s.op_b == Op::N ? s.k : s.n, bc = s.op_b == Op::N ? s.n : s.k;
  auto fill = [&](index_t rows, index_t cols, index_t members, index_t& stride) {
    const auto one = random_matrix<S>(rows, cols, s.layout, s.pad, rng, s.k);
    stride = index_t(one.storage.size());
    std::vector<T> all;
    for (index_t b = 0; b < members; ++b) {
      const auto m = random_matrix<S>(rows, cols, s.layout, s.pad, rng, s.k);
      all.insert(all.end(), m.storage.begin(), m.storage.end());
    }
    return std::make_pair(all, one.view);
  };
  index_t sa, sb, sc;
  auto [a, av] = fill(ar, ac, s.shared_a ? 1 : s.batch, sa);
  auto [b, bv] = fill(br, bc, s.batch, sb);
  auto [c_in, cv] = fill(s.m, s.n, s.batch, sc);
  if (s.shared_a) sa = 0;
  std::vector<std::int32_t> k_in(c_in.size());
  for (auto& x : k_in) x = std::int32_t(rng() % 1000);
  if constexpr (std::is_integral_v<T>)  // β ⊗ C must stay within the input domain
    for (T& v : c_in) v = v == S::zero() ? v : T(v / 2);
  const T beta = s.beta ? S::one() : S::zero();
  const index_t ld_k = cv.ld;
  auto run = [&](const Context& ctx, std::vector<T>& c, std::vector<std::int32_t>& ks, bool device) {
    const T *pa = a.data(), *pb = b.data();
    T* pc = c.data();
    std::int32_t* pk = ks.data();
    std::unique_ptr<DeviceCopy<T>> da, db, dc;
    std::unique_ptr<DeviceCopy<std::int32_t>> dk;
    if (device) {
      da = std::make_unique<DeviceCopy<T>>(a), db = std::make_unique<DeviceCopy<T>>(b);
      dc = std::make_unique<DeviceCopy<T>>(c), dk = std::make_unique<DeviceCopy<std::int32_t>>(ks);
      pa = da->ptr, pb = db->ptr, pc = dc->ptr, pk = dk->ptr;
    }
    gemm_argmax_batched<S>(ctx, s.op_a, MatrixView<const T>{pa, av.rows, av.cols, av.ld, av.layout}, sa, s.op_b,
                           MatrixView<const T>{pb, bv.rows, bv.cols, bv.ld, bv.layout}, sb,
                           MatrixView<T>{pc, cv.rows, cv.cols, cv.ld, cv.layout}, sc,
                           MatrixView<std::int32_t>{pk, s.m, s.n, ld_k, cv.layout}, sc, s.batch, S::one(), beta);
    if (device) {
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      dc->to_host(c);
      dk->to_host(ks);
    }
  };
  std::vector<T> c_cpu = c_in, c_gpu = c_in;
  std::vector<std::int32_t> k_cpu = k_in, k_gpu = k_in;
  run(on(Backend::cpu), c_cpu, k_cpu, false);
  run(on(Backend::cuda), c_gpu, k_gpu, s.device);
  const std::string what = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " batch " +
                           std::to_string(s.batch) + (s.device ? " device" : " host") + (s.beta ? " beta" : "");
  EXPECT_TRUE(same_bits(c_cpu, c_gpu)) << what;
  EXPECT_EQ(k_cpu, k_gpu) << what;  // padding outside the views included: it must stay untouched
}

TYPED_TEST(CudaArgmax, MatchesTheCpuOnOddShapes) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(5);
  const Shape shapes[] = {
      {1, 1, 1, Op::N, Op::N, Layout::row_major, 0, 1, false, false, false},
      {7, 33, 5, Op::T, Op::N, Layout::col_major, 2, 1, false, true, true},
      {127, 129, 1000, Op::N, Op::T, Layout::row_major, 1, 1, false, true, false},
      {129, 127, 65, Op::T, Op::T, Layout::col_major, 0, 1, false, false, true},
      {1000, 65, 1025, Op::N, Op::N, Layout::row_major, 0, 1, false, true, false},
      {33, 17, 40, Op::N, Op::N, Layout::row_major, 3, 5, true, true, true},
      {64, 64, 64, Op::N, Op::N, Layout::row_major, 0, 70000 / 1000, false, false, false},
      {5, 6, 0, Op::N, Op::N, Layout::row_major, 0, 1, false, true, true},
  };
  for (const Shape& s : shapes) check_shape<TypeParam>(s, rng);
}

// Every term equal: index 0 everywhere on the GPU too; a row of A all 0̄: −1.
TYPED_TEST(CudaArgmax, TiesGoToTheSmallestK) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = TypeParam;
  using T = typename S::value_type;
  const index_t m = 70, n = 66, k = 300;
  std::vector<T> a(std::size_t(m * k), S::one()), b(std::size_t(k * n), S::one()), c(std::size_t(m * n));
  for (index_t kk = 0; kk < k; ++kk) a[std::size_t(3 * k + kk)] = S::zero();
  std::vector<std::int32_t> ks(std::size_t(m * n), 777);
  gemm_argmax<S>(on(Backend::cuda), Op::N, MatrixView<const T>{a.data(), m, k, k, Layout::row_major}, Op::N,
                 MatrixView<const T>{b.data(), k, n, n, Layout::row_major}, MatrixView<T>{c.data(), m, n, n, Layout::row_major},
                 MatrixView<std::int32_t>{ks.data(), m, n, n, Layout::row_major});
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) ASSERT_EQ(ks[std::size_t(i * n + j)], i == 3 ? -1 : 0) << i << "," << j;
}

// β ⊗ C tied with the product, ahead of it or behind it, entry by entry (ties: the product's own
// value; the others: another entry's): where it stays ahead or ties, the GPU skips the rescan and
// leaves K* and unchanged C alone (argmax.cuh), and C and K* still match the CPU's bit for bit, on
// device pointers and on host ones.
TYPED_TEST(CudaArgmax, IncomingAheadTiedOrBehind) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = TypeParam;
  using T = typename S::value_type;
  std::mt19937_64 rng(9);
  for (const auto& [m, n, k] : {std::tuple<index_t, index_t, index_t>{131, 77, 45}, {1000, 33, 1025}}) {
    auto a = random_matrix<S>(m, k, Layout::row_major, 0, rng, k), b = random_matrix<S>(k, n, Layout::row_major, 0, rng, k);
    if constexpr (std::is_integral_v<T>)  // products, which become C, must stay within the input domain
      for (auto* x : {&a.storage, &b.storage})
        for (T& v : *x) v = v == S::zero() ? v : T(v / 2);
    const MatrixView<const T> av{a.storage.data(), m, k, k, Layout::row_major}, bv{b.storage.data(), k, n, n, Layout::row_major};
    std::vector<T> product(std::size_t(m * n));
    std::vector<std::int32_t> unused(product.size());
    gemm_argmax<S>(on(Backend::cpu), Op::N, av, Op::N, bv, MatrixView<T>{product.data(), m, n, n, Layout::row_major},
                   MatrixView<std::int32_t>{unused.data(), m, n, n, Layout::row_major});
    std::vector<T> c_in(product.size());
    std::vector<std::int32_t> k_in(product.size());
    for (std::size_t e = 0; e < c_in.size(); ++e) {
      c_in[e] = e % 3 == 0 ? product[e] : e % 3 == 1 ? product[(e * 7919 + 13) % product.size()] : S::zero();
      k_in[e] = std::int32_t(e % 1000);
    }
    for (const bool device : {true, false}) {
      std::vector<T> c_cpu = c_in, c_gpu = c_in;
      std::vector<std::int32_t> k_cpu = k_in, k_gpu = k_in;
      auto run = [&](Backend backend, T* c, std::int32_t* ks, const T* pa, const T* pb) {
        gemm_argmax<S>(on(backend), Op::N, MatrixView<const T>{pa, m, k, k, Layout::row_major}, Op::N,
                       MatrixView<const T>{pb, k, n, n, Layout::row_major}, MatrixView<T>{c, m, n, n, Layout::row_major},
                       MatrixView<std::int32_t>{ks, m, n, n, Layout::row_major}, S::one(), S::one());
      };
      run(Backend::cpu, c_cpu.data(), k_cpu.data(), a.storage.data(), b.storage.data());
      if (device) {
        DeviceCopy<T> da(a.storage), db(b.storage), dc(c_gpu);
        DeviceCopy<std::int32_t> dk(k_gpu);
        run(Backend::cuda, dc.ptr, dk.ptr, da.ptr, db.ptr);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        dc.to_host(c_gpu);
        dk.to_host(k_gpu);
      } else {
        run(Backend::cuda, c_gpu.data(), k_gpu.data(), a.storage.data(), b.storage.data());
      }
      const std::string what = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + (device ? " device" : " host");
      EXPECT_TRUE(same_bits(c_cpu, c_gpu)) << what;
      EXPECT_EQ(k_cpu, k_gpu) << what;
      // Every tie kept its incoming index (keeps_incoming; a NaN incoming would not, and none is here).
      std::size_t moved = 0;
      for (std::size_t e = 0; e < k_cpu.size(); e += 3) moved += product[e] == product[e] && k_cpu[e] != k_in[e];
      EXPECT_EQ(moved, 0u) << what;
    }
  }
}

template <class S> class CudaArgmaxNanIncoming : public ::testing::Test {};
TYPED_TEST_SUITE(CudaArgmaxNanIncoming, NanProductSelectingSemirings, SemiringNames);

// β ⊗ C that is NaN counts as 0̄: the index names the product's winning term, not C's index, on
// device pointers, with K whole and split.
TYPED_TEST(CudaArgmaxNanIncoming, IndexComesFromTheProduct) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = TypeParam;
  using T = typename S::value_type;
  for (const auto& [m, n, k] : {std::tuple<index_t, index_t, index_t>{1, 1, 2}, {7, 33, 129}, {33, 7, 1000}, {130, 70, 4100}})
    for (int split : {0, 4}) {
      const std::string failure = check_nan_incoming_argmax<S>(m, n, k, [&](const T* a, const T* b, T* c, std::int32_t* ks, T beta) {
        const std::vector<T> av(a, a + m * k), bv(b, b + k * n), cv(c, c + m * n);
        const std::vector<std::int32_t> kv(ks, ks + m * n);
        DeviceCopy<T> da(av), db(bv), dc(cv);
        DeviceCopy<std::int32_t> dk(kv);
        Context ctx = on(Backend::cuda);
        ctx.cuda_split_k = split;
        gemm_argmax<S>(ctx, Op::N, MatrixView<const T>{da.ptr, m, k, k, Layout::row_major}, Op::N,
                       MatrixView<const T>{db.ptr, k, n, n, Layout::row_major}, MatrixView<T>{dc.ptr, m, n, n, Layout::row_major},
                       MatrixView<std::int32_t>{dk.ptr, m, n, n, Layout::row_major}, S::one(), beta);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        std::vector<T> c_out(std::size_t(m * n));
        std::vector<std::int32_t> k_out(std::size_t(m * n));
        dc.to_host(c_out);
        dk.to_host(k_out);
        std::copy(c_out.begin(), c_out.end(), c);
        std::copy(k_out.begin(), k_out.end(), ks);
      });
      EXPECT_EQ(failure, "") << m << "x" << n << "x" << k << " split " << split;
    }
}

}  // namespace
}  // namespace ringmm::testing
