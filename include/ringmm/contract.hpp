// Pairwise tensor contraction over a semiring: out[o] = ⊕ over the indices of a and b absent from o
// of a[i] ⊗ b[j], in einsum's notation ("ijk,jkl->il"). Its indices are classified into batch (in
// a, b and out), left (a and out), right (b and out) and contracted (a and b only); the contraction
// is then one strided batched product: a as batch × (left × contracted) matrices, b as batch ×
// (contracted × right), out as batch × (left × right). An operand is read in place where its strides
// express that grouping (each group's indices merge into one stride, and one of its two matrix
// strides is 1, as a leading dimension describes), and copied into a contiguous buffer otherwise.
// Copies are made on the host: a tensor in device memory must be expressible in place.
//
// ringmm.einsum (Python) builds whole expressions from such pairs, with diagonals, reductions and
// contraction paths; here each index appears at most once per operand, and every index of a and b
// is in the other operand or in out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ringmm/context.hpp"
#include "ringmm/gemm.hpp"
#include "ringmm/matrix.hpp"

namespace ringmm {

// A tensor: data, its shape and its strides in elements (any sign but negative is refused).
template <class T> struct TensorView {
  T* data = nullptr;
  std::vector<index_t> shape;
  std::vector<index_t> strides;
};

// The strides of a row-major (C-contiguous) tensor of `shape`.
std::vector<index_t> contiguous_strides(const std::vector<index_t>& shape);

// A pairwise contraction's indices, parsed and classified. Errors (Errc::invalid_argument, subject
// "spec") name the subscript at fault.
struct Contraction {
  std::string a, b, out;                      // each operand's indices, one letter a dimension
  std::string batch, left, right, contracted;  // in the order a (then b) has them
  static Contraction parse(std::string_view spec);
};

namespace detail {

// How contract reads one operand: as batched matrices in place (batch_stride, a view's layout and
// leading dimension from the tensor's strides), or after a copy of its axes in `order` (a
// contiguous buffer with the same matrices).
struct ContractOperand {
  bool in_place = false;
  index_t batch_stride = 0;
  Layout layout = Layout::row_major;
  index_t ld = 1;
  std::vector<int> order;  // the tensor's axes, batch group first, then the matrix's rows, then its columns
};

struct ContractPlan {
  index_t batch = 1, m = 1, n = 1, k = 1;
  ContractOperand a, b, out;
};

// Checks the tensors against the contraction (ranks, sizes, strides) and plans how each is read.
// Names the operands a, b and out in errors.
ContractPlan plan_contraction(const Contraction& c, const std::vector<index_t>& a_shape,
                              const std::vector<index_t>& a_strides, const std::vector<index_t>& b_shape,
                              const std::vector<index_t>& b_strides, const std::vector<index_t>& out_shape,
                              const std::vector<index_t>& out_strides);

// Copies between a strided tensor and a contiguous buffer holding its axes in `order` (host memory;
// a tensor in device memory is refused, naming it).
void gather(const char* name, const void* tensor, const std::vector<index_t>& shape,
            const std::vector<index_t>& strides, const std::vector<int>& order, std::size_t element, void* buffer);
void scatter(const char* name, const void* buffer, const std::vector<index_t>& shape,
             const std::vector<index_t>& strides, const std::vector<int>& order, std::size_t element, void* tensor);

}  // namespace detail

// out = a ⊗ b contracted as `spec` says, over S. out is written, never read (beta = 0̄).
template <class S>
void contract(const Context& ctx, std::string_view spec, TensorView<const element_t<S>> a,
              TensorView<const element_t<S>> b, TensorView<element_t<S>> out) {
  using T = element_t<S>;
  const Contraction c = Contraction::parse(spec);
  const detail::ContractPlan p =
      detail::plan_contraction(c, a.shape, a.strides, b.shape, b.strides, out.shape, out.strides);
  std::vector<T> a_copy, b_copy, out_copy;
  auto read = [&](const detail::ContractOperand& op, const char* name, const TensorView<const T>& t, index_t matrix,
                  std::vector<T>& copy) {
    if (op.in_place) return t.data;
    copy.resize(std::size_t(p.batch * matrix));
    detail::gather(name, t.data, t.shape, t.strides, op.order, sizeof(T), copy.data());
    return static_cast<const T*>(copy.data());
  };
  const T* a_data = read(p.a, "a", a, p.m * p.k, a_copy);
  const T* b_data = read(p.b, "b", b, p.k * p.n, b_copy);
  T* out_data = out.data;
  if (!p.out.in_place) {
    out_copy.resize(std::size_t(p.batch * p.m * p.n));
    out_data = out_copy.data();
  }
  const MatrixView<const T> av{a_data, p.m, p.k, p.a.ld, p.a.layout};
  const MatrixView<const T> bv{b_data, p.k, p.n, p.b.ld, p.b.layout};
  const MatrixView<T> cv{out_data, p.m, p.n, p.out.ld, p.out.layout};
  if (p.batch > 0)
    gemm_batched<S>(ctx, Op::N, av, p.a.batch_stride, Op::N, bv, p.b.batch_stride, cv, p.out.batch_stride, p.batch);
  if (!p.out.in_place)
    detail::scatter("out", out_copy.data(), out.shape, out.strides, p.out.order, sizeof(T), out.data);
}

}  // namespace ringmm
