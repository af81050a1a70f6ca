// ringmm::contract on tensors in device memory against the same contraction of the same storage on
// the host (tests/api/contract_test.cpp checks that one against enumeration): operands and outputs
// read in place, and copied into the engine's pooled workspace by the strided-copy kernel where
// their strides do not express the grouped layout (permuted axes, padding), for element sizes 1, 4
// and 8; sizes 0 and 1. Label gpu; skips without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cuda_testing.hpp"
#include "ringmm/contract.hpp"
#include "ringmm/ringmm.hpp"

namespace ringmm::testing {
namespace {

// A tensor of `term`'s indices, its axes stored in `perm`'s order (perm[0] outermost) and the
// innermost padded by `pad`, filled with random values of S's domain.
template <class T> struct Stored {
  std::vector<T> storage;
  std::vector<index_t> shape, strides;
};

template <class S>
Stored<element_t<S>> make(const std::string& term, const std::map<char, index_t>& sizes, const std::vector<int>& perm,
                          index_t pad, std::mt19937& rng) {
  using T = element_t<S>;
  Stored<T> t;
  const std::size_t rank = term.size();
  for (char x : term) t.shape.push_back(sizes.at(x));
  t.strides.assign(rank, 1);
  index_t step = 1;
  for (std::size_t i = rank; i-- > 0;) {
    const std::size_t axis = std::size_t(perm[i]);
    t.strides[axis] = step;
    step *= std::max<index_t>(1, t.shape[axis] + (i + 1 == rank ? pad : 0));
  }
  t.storage.resize(std::size_t(step));
  std::uniform_int_distribution<int> value(0, 9);
  for (T& x : t.storage) x = T(S::kind == SemiringKind::or_and ? value(rng) % 2 : value(rng) - 4);
  return t;
}

template <class S> void check_against_host(const char* spec, std::mt19937& rng) {
  using T = element_t<S>;
  const Contraction c = Contraction::parse(spec);
  for (int round = 0; round < 6; ++round) {
    std::map<char, index_t> sizes;
    for (char x : c.a + c.b) sizes[x] = std::uniform_int_distribution<index_t>(round == 5 ? 0 : 1, 40)(rng);
    auto order = [&](std::size_t n) {
      std::vector<int> p(n);
      std::iota(p.begin(), p.end(), 0);
      if (round % 2 == 1) std::shuffle(p.begin(), p.end(), rng);
      return p;
    };
    const index_t pad = round >= 3 ? 3 : 0;
    auto a = make<S>(c.a, sizes, order(c.a.size()), pad, rng);
    auto b = make<S>(c.b, sizes, order(c.b.size()), pad, rng);
    auto out = make<S>(c.out, sizes, order(c.out.size()), round == 4 ? 1 : 0, rng);
    std::vector<T> host_out = out.storage;
    Context cpu;
    cpu.backend = Backend::cpu;
    contract<S>(cpu, spec, TensorView<const T>{a.storage.data(), a.shape, a.strides},
                TensorView<const T>{b.storage.data(), b.shape, b.strides}, TensorView<T>{host_out.data(), out.shape, out.strides});

    DeviceCopy<T> da(a.storage), db(b.storage), dout(out.storage);
    Context gpu;
    gpu.backend = Backend::cuda;
    contract<S>(gpu, spec, TensorView<const T>{da.ptr, a.shape, a.strides}, TensorView<const T>{db.ptr, b.shape, b.strides},
                TensorView<T>{dout.ptr, out.shape, out.strides});
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<T> device_out(out.storage.size());
    dout.to_host(device_out);
    // Every element, padding included: the copies write the tensor's elements and nothing else.
    for (std::size_t i = 0; i < host_out.size(); ++i)
      ASSERT_EQ(device_out[i], host_out[i]) << spec << " round " << round << " storage element " << i;
  }
}

const char* const specs[] = {"ij,jk->ik", "ijk,jkl->il", "bij,bjk->bik", "ijk,kjl->li", "ji,jk->ik", "ij,kj->ki",
                             "i,j->ij",   "i,i->",       "abc,cd->dab",  "ab,ab->ab",   "xij,jkx->xik"};

TEST(CudaContract, DeviceTensorsMatchTheHostInPlaceAndThroughCopies) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937 rng(31);
  for (const char* spec : specs) {
    check_against_host<MaxPlus<std::int32_t>>(spec, rng);
    check_against_host<MinPlus<double>>(spec, rng);
    check_against_host<OrAnd>(spec, rng);
  }
}

}  // namespace
}  // namespace ringmm::testing
