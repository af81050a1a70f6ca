// Pairwise tensor contraction over a semiring: out[o] = ⊕ over the indices of a and b absent from o
// of a[i] ⊗ b[j], in einsum's notation ("ijk,jkl->il"). Its indices are classified into batch (in
// a, b and out), left (a and out), right (b and out) and contracted (a and b only); the contraction
// is then one strided batched product: a as batch × (left × contracted) matrices, b as batch ×
// (contracted × right), out as batch × (left × right). An operand is read in place where its strides
// express that grouping (each group's indices merge into one stride, and one of its two matrix
// strides is 1, as a leading dimension describes), and copied into a contiguous buffer otherwise:
// beside the tensor, on the host for a host tensor, and for a tensor in device memory a block of the
// CUDA engine's pooled workspace, filled and emptied by a kernel on the context's stream.
//
// ringmm.einsum (Python) builds whole expressions from such pairs, with diagonals, reductions and
// contraction paths; here each index appears at most once per operand, and every index of a and b
// is in the other operand or in out.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
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

// A contiguous buffer of `bytes` beside `tensor`: host memory for a host tensor, the CUDA engine's
// pooled workspace (released on ctx's stream) for a tensor in device memory.
class OperandCopy {
 public:
  OperandCopy(const Context& ctx, const void* tensor, std::size_t bytes);
  void* get() const { return data_; }

 private:
  std::vector<std::byte> host_;
  std::shared_ptr<void> device_;
  void* data_ = nullptr;
};

// Copies between a strided tensor and a contiguous buffer (an OperandCopy of it) holding its axes in
// `order`: on the host, or by a kernel on ctx's stream where the tensor is in device memory.
void gather(const Context& ctx, const void* tensor, const std::vector<index_t>& shape,
            const std::vector<index_t>& strides, const std::vector<int>& order, std::size_t element, void* buffer);
void scatter(const Context& ctx, const void* buffer, const std::vector<index_t>& shape,
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
  std::optional<detail::OperandCopy> a_copy, b_copy, out_copy;
  auto read = [&](const detail::ContractOperand& op, const TensorView<const T>& t, index_t matrix,
                  std::optional<detail::OperandCopy>& copy) {
    if (op.in_place) return t.data;
    copy.emplace(ctx, t.data, std::size_t(p.batch * matrix) * sizeof(T));
    detail::gather(ctx, t.data, t.shape, t.strides, op.order, sizeof(T), copy->get());
    return static_cast<const T*>(copy->get());
  };
  const T* a_data = read(p.a, a, p.m * p.k, a_copy);
  const T* b_data = read(p.b, b, p.k * p.n, b_copy);
  T* out_data = out.data;
  if (!p.out.in_place) {
    out_copy.emplace(ctx, out.data, std::size_t(p.batch * p.m * p.n) * sizeof(T));
    out_data = static_cast<T*>(out_copy->get());
  }
  const MatrixView<const T> av{a_data, p.m, p.k, p.a.ld, p.a.layout};
  const MatrixView<const T> bv{b_data, p.k, p.n, p.b.ld, p.b.layout};
  const MatrixView<T> cv{out_data, p.m, p.n, p.out.ld, p.out.layout};
  if (p.batch > 0)
    gemm_batched<S>(ctx, Op::N, av, p.a.batch_stride, Op::N, bv, p.b.batch_stride, cv, p.out.batch_stride, p.batch);
  if (!p.out.in_place)
    detail::scatter(ctx, out_copy->get(), out.shape, out.strides, p.out.order, sizeof(T), out.data);
}

}  // namespace ringmm
