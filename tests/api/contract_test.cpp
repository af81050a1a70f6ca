// ringmm::contract on the CPU against a loop over every index: classification, operands read in
// place or copied (permuted, strided), outputs written in place or through a copy, every index role
// present or absent, sizes 0 and 1; and the refusals, which name the spec or the operand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ringmm/contract.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm {
namespace {

Context cpu() {
  Context ctx;
  ctx.backend = Backend::cpu;
  return ctx;
}

// A tensor of `term`'s indices with their sizes, in storage whose axes are permuted by `perm` and
// padded (so that strides are neither contiguous nor in the subscript's order).
struct Tensor {
  std::vector<std::int32_t> storage;
  TensorView<std::int32_t> view;
};

Tensor make(const std::string& term, const std::map<char, index_t>& sizes, const std::vector<int>& perm, index_t pad,
            std::mt19937& rng) {
  Tensor t;
  const std::size_t rank = term.size();
  t.view.shape.resize(rank);
  for (std::size_t d = 0; d < rank; ++d) t.view.shape[d] = sizes.at(term[d]);
  // storage order: perm[0] outermost; the innermost axis padded by `pad`
  t.view.strides.assign(rank, 1);
  index_t step = 1;
  for (std::size_t i = rank; i-- > 0;) {
    const std::size_t axis = std::size_t(perm[i]);
    t.view.strides[axis] = step;
    step *= std::max<index_t>(1, t.view.shape[axis] + (i + 1 == rank ? pad : 0));
  }
  t.storage.resize(std::size_t(step));
  std::uniform_int_distribution<std::int32_t> value(-50, 50);
  for (auto& x : t.storage) x = value(rng);
  t.view.data = t.storage.data();
  return t;
}

// out by enumeration: ⊕ (max) over all index values of ⊗ (+), for max-plus over int32.
std::vector<std::int32_t> reference(const Contraction& c, const std::map<char, index_t>& sizes, const Tensor& a,
                                    const Tensor& b, const std::vector<index_t>& out_shape) {
  std::string all = c.a + c.b;
  std::string letters;
  for (char x : all)
    if (letters.find(x) == std::string::npos) letters += x;
  std::vector<index_t> at(letters.size(), 0);
  index_t out_count = 1;
  for (index_t n : out_shape) out_count *= n;
  std::vector<std::int32_t> out(std::size_t(out_count), MaxPlus<std::int32_t>::zero());
  index_t total = 1;
  for (char x : letters) total *= sizes.at(x);
  auto element = [&](const std::string& term, const TensorView<std::int32_t>& v) {
    index_t offset = 0;
    for (std::size_t d = 0; d < term.size(); ++d) offset += at[letters.find(term[d])] * v.strides[d];
    return v.data[offset];
  };
  for (index_t i = 0; i < total; ++i) {
    index_t rest = i;
    for (std::size_t d = letters.size(); d-- > 0;) {
      at[d] = rest % sizes.at(letters[d]);
      rest /= sizes.at(letters[d]);
    }
    index_t o = 0;
    for (char x : c.out) o = o * sizes.at(x) + at[letters.find(x)];
    out[std::size_t(o)] = std::max(out[std::size_t(o)], element(c.a, a.view) + element(c.b, b.view));
  }
  return out;
}

TEST(Contract, ClassifiesTheIndices) {
  const Contraction c = Contraction::parse("bijk,bjkl->bli");
  EXPECT_EQ(c.batch, "b");
  EXPECT_EQ(c.left, "i");
  EXPECT_EQ(c.contracted, "jk");
  EXPECT_EQ(c.right, "l");
}

TEST(Contract, MatchesEnumerationInPlaceAndThroughCopies) {
  std::mt19937 rng(27);
  const char* specs[] = {"ij,jk->ik", "ijk,jkl->il", "bij,bjk->bik", "ijk,kjl->li", "ji,jk->ik",  "ij,kj->ki",
                         "i,j->ij",   "i,i->",       "bi,bi->b",     "abc,cd->dab", "ab,ab->ab", "xij,jkx->xik"};
  for (const char* spec : specs)
    for (int round = 0; round < 6; ++round) {
      const Contraction c = Contraction::parse(spec);
      std::map<char, index_t> sizes;
      for (char x : c.a + c.b) sizes[x] = std::uniform_int_distribution<index_t>(round == 5 ? 0 : 1, 5)(rng);
      const bool permute = round % 2 == 1;
      const index_t pad = round >= 3 ? 2 : 0;
      auto order = [&](std::size_t n) {  // storage order of the axes
        std::vector<int> p(n);
        std::iota(p.begin(), p.end(), 0);
        if (permute) std::shuffle(p.begin(), p.end(), rng);
        return p;
      };
      Tensor a = make(c.a, sizes, order(c.a.size()), pad, rng), b = make(c.b, sizes, order(c.b.size()), pad, rng);
      Tensor out = make(c.out, sizes, order(c.out.size()), round == 4 ? 1 : 0, rng);
      contract<MaxPlus<std::int32_t>>(cpu(), spec, TensorView<const std::int32_t>{a.view.data, a.view.shape, a.view.strides},
                                      TensorView<const std::int32_t>{b.view.data, b.view.shape, b.view.strides}, out.view);
      const std::vector<std::int32_t> want = reference(c, sizes, a, b, out.view.shape);
      // Read out back in its subscript's row-major order through its strides.
      std::vector<index_t> at(c.out.size(), 0);
      for (std::size_t i = 0; i < want.size(); ++i) {
        index_t rest = index_t(i), offset = 0;
        for (std::size_t d = c.out.size(); d-- > 0;) {
          at[d] = rest % out.view.shape[d];
          rest /= out.view.shape[d];
          offset += at[d] * out.view.strides[d];
        }
        ASSERT_EQ(out.view.data[offset], want[i]) << spec << " round " << round << " entry " << i;
      }
    }
}

TEST(Contract, RefusalsNameTheSpecOrTheOperand) {
  std::vector<float> x(64);
  const TensorView<const float> m{x.data(), {4, 4}, {4, 1}};
  TensorView<float> out{x.data(), {4, 4}, {4, 1}};
  auto refused = [&](const char* spec, const TensorView<const float>& a, const TensorView<float>& o, Errc code,
                     const std::string& subject, const std::string& words) {
    try {
      contract<MaxPlus<float>>(cpu(), spec, a, m, o);
      ADD_FAILURE() << spec << ": not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << spec << ": " << e.what();
      EXPECT_EQ(e.subject(), subject) << spec << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << spec << ": " << e.what();
    }
  };
  refused("ij,jk", m, out, Errc::invalid_argument, "spec", "'ab,bc->ac'");
  refused("ij,jk,kl->il", m, out, Errc::invalid_argument, "spec", "more than two operands");
  refused("ii,ik->ik", m, out, Errc::invalid_argument, "spec", "a repeats index 'i'");
  refused("ij,jk->iz", m, out, Errc::invalid_argument, "spec", "out's index 'z' is in neither operand");
  refused("ij,kl->ik", m, out, Errc::invalid_argument, "spec", "index 'j' is in a only");
  refused("i1,1k->ik", m, out, Errc::invalid_argument, "spec", "not a letter");
  refused("ijk,jk->ik", m, out, Errc::dimension_mismatch, "a", "has 2 dimensions but its subscript 'ijk'");
  const TensorView<const float> wide{x.data(), {4, 8}, {8, 1}};
  refused("ij,jk->ik", wide, out, Errc::dimension_mismatch, "b", "index 'j' has size 4 here but 8 in a");
}

}  // namespace
}  // namespace ringmm
