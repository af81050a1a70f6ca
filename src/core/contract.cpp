// ringmm::contract's non-template half: parsing and classifying a pairwise spec, planning how each
// tensor is read (in place where its strides express the grouped layout, else copied), and the
// copies (ringmm/contract.hpp).
#include "ringmm/contract.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ringmm/config.hpp"
#include "ringmm/cuda/device.hpp"  // is_device_pointer, defined where CUDA is built (asked only then)
#include "ringmm/detail/cuda_backend.hpp"  // strided_copy, workspace_block (likewise)
#include "ringmm/error.hpp"

namespace ringmm {

std::vector<index_t> contiguous_strides(const std::vector<index_t>& shape) {
  std::vector<index_t> strides(shape.size());
  index_t step = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = step;
    step *= std::max<index_t>(shape[d], 1);
  }
  return strides;
}

namespace {

[[noreturn]] void bad_spec(std::string_view spec, const std::string& why) {
  throw Error(Errc::invalid_argument, "spec", "'" + std::string(spec) + "': " + why);
}

bool is_index(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

Contraction Contraction::parse(std::string_view spec) {
  const std::size_t arrow = spec.find("->");
  if (arrow == std::string_view::npos) bad_spec(spec, "a pairwise contraction is written 'ab,bc->ac'");
  const std::string_view inputs = spec.substr(0, arrow), output = spec.substr(arrow + 2);
  const std::size_t comma = inputs.find(',');
  if (comma == std::string_view::npos || inputs.find(',', comma + 1) != std::string_view::npos)
    bad_spec(spec, "it names " + std::string(comma == std::string_view::npos ? "one operand" : "more than two operands") +
                       "; a pairwise contraction has two");
  Contraction c;
  c.a = std::string(inputs.substr(0, comma));
  c.b = std::string(inputs.substr(comma + 1));
  c.out = std::string(output);
  for (const auto& [term, name] : {std::pair{&c.a, "a"}, std::pair{&c.b, "b"}, std::pair{&c.out, "out"}})
    for (std::size_t i = 0; i < term->size(); ++i) {
      const char x = (*term)[i];
      if (!is_index(x)) bad_spec(spec, std::string(name) + "'s subscript has '" + x + "', which is not a letter");
      if (term->find(x, i + 1) != std::string::npos)
        bad_spec(spec, std::string(name) + " repeats index '" + x + "' (a diagonal: pass it as a strided view)");
    }
  auto in = [](const std::string& s, char x) { return s.find(x) != std::string::npos; };
  for (char x : c.out)
    if (!in(c.a, x) && !in(c.b, x)) bad_spec(spec, std::string("out's index '") + x + "' is in neither operand");
  for (const auto& [term, other, name] : {std::tuple{&c.a, &c.b, "a"}, std::tuple{&c.b, &c.a, "b"}})
    for (char x : *term)
      if (!in(*other, x) && !in(c.out, x))
        bad_spec(spec, std::string("index '") + x + "' is in " + name +
                           " only and not in out: reduce it first (ringmm.einsum does)");
  for (char x : c.a) {
    if (in(c.b, x)) (in(c.out, x) ? c.batch : c.contracted) += x;
    else c.left += x;
  }
  for (char x : c.b)
    if (!in(c.a, x)) c.right += x;
  return c;
}

namespace detail {

namespace {

// The axes of `term` holding `group`'s indices, in the group's order.
std::vector<int> axes_of(const std::string& term, const std::string& group) {
  std::vector<int> axes;
  for (char x : group) axes.push_back(int(term.find(x)));
  return axes;
}

// One stride through the axes (in that order) as if they were one dimension, if they merge: each
// stride is the next one's times its size (axes of size 1 anywhere). (size, stride).
std::optional<std::pair<index_t, index_t>> merged(const std::vector<int>& axes, const std::vector<index_t>& shape,
                                                  const std::vector<index_t>& strides) {
  index_t size = 1, stride = 0, next = -1;
  for (std::size_t i = axes.size(); i-- > 0;) {
    const index_t n = shape[std::size_t(axes[i])], s = strides[std::size_t(axes[i])];
    size *= n;
    if (n == 1) continue;
    if (next >= 0 && s != next) return std::nullopt;
    if (next < 0) stride = s;
    next = s * n;
  }
  return std::pair{size, size == 1 ? index_t(1) : stride};
}

// How an operand of (batch, rows, cols) groups is read: in place when each group merges and a
// leading dimension describes the matrix; else from a copy in (batch, rows, cols) order.
ContractOperand plan_operand(const std::string& term, const std::string& batch, const std::string& rows,
                             const std::string& cols, const std::vector<index_t>& shape,
                             const std::vector<index_t>& strides, index_t members, bool written) {
  ContractOperand op;
  const std::vector<int> b = axes_of(term, batch), r = axes_of(term, rows), c = axes_of(term, cols);
  op.order = b;
  op.order.insert(op.order.end(), r.begin(), r.end());
  op.order.insert(op.order.end(), c.begin(), c.end());
  const auto mb = merged(b, shape, strides), mr = merged(r, shape, strides), mc = merged(c, shape, strides);
  if (mb && mr && mc) {
    const auto [nr, sr] = *mr;
    const auto [nc, sc] = *mc;
    // A written batch must not overlap itself: its stride steps past a whole matrix.
    const index_t span = std::max<index_t>(1, (nr - 1) * sr + (nc - 1) * sc + 1);
    const bool batch_ok = members <= 1 || !written || mb->second >= span;
    if (batch_ok && (nc == 1 || sc == 1) && (nr == 1 || sr >= nc)) {
      op = {true, members <= 1 ? 0 : mb->second, Layout::row_major, std::max<index_t>({sr, nc, 1}), op.order};
      return op;
    }
    if (batch_ok && (nr == 1 || sr == 1) && (nc == 1 || sc >= nr)) {
      op = {true, members <= 1 ? 0 : mb->second, Layout::col_major, std::max<index_t>({sc, nr, 1}), op.order};
      return op;
    }
  }
  index_t n_rows = 1, n_cols = 1;
  for (int axis : r) n_rows *= shape[std::size_t(axis)];
  for (int axis : c) n_cols *= shape[std::size_t(axis)];
  op.in_place = false;
  op.layout = Layout::row_major;
  op.ld = std::max<index_t>(1, n_cols);
  op.batch_stride = n_rows * n_cols;
  return op;
}

void check_tensor(const char* name, const std::string& term, const std::vector<index_t>& shape,
                  const std::vector<index_t>& strides) {
  if (shape.size() != term.size())
    throw Error(Errc::dimension_mismatch, name,
                "has " + std::to_string(shape.size()) + " dimensions but its subscript '" + term + "' names " +
                    std::to_string(term.size()));
  if (strides.size() != shape.size())
    throw Error(Errc::invalid_argument, name,
                std::to_string(strides.size()) + " strides for " + std::to_string(shape.size()) + " dimensions");
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 0 || strides[d] < 0)
      throw Error(Errc::invalid_argument, name, "dimension " + std::to_string(d) + " has size " +
                                                    std::to_string(shape[d]) + " and stride " + std::to_string(strides[d]) +
                                                    ": sizes and strides are not negative");
}

}  // namespace

ContractPlan plan_contraction(const Contraction& c, const std::vector<index_t>& a_shape,
                              const std::vector<index_t>& a_strides, const std::vector<index_t>& b_shape,
                              const std::vector<index_t>& b_strides, const std::vector<index_t>& out_shape,
                              const std::vector<index_t>& out_strides) {
  check_tensor("a", c.a, a_shape, a_strides);
  check_tensor("b", c.b, b_shape, b_strides);
  check_tensor("out", c.out, out_shape, out_strides);
  // Every index has one size wherever it appears.
  auto size_in = [](const std::string& term, const std::vector<index_t>& shape, char x) -> std::optional<index_t> {
    const std::size_t at = term.find(x);
    return at == std::string::npos ? std::nullopt : std::optional<index_t>(shape[at]);
  };
  for (char x : c.a + c.b + c.out) {
    const std::optional<index_t> sizes[3] = {size_in(c.a, a_shape, x), size_in(c.b, b_shape, x),
                                             size_in(c.out, out_shape, x)};
    const char* names[3] = {"a", "b", "out"};
    for (int i = 1; i < 3; ++i)
      for (int j = 0; j < i; ++j)
        if (sizes[i] && sizes[j] && *sizes[i] != *sizes[j])
          throw Error(Errc::dimension_mismatch, names[i],
                      std::string("index '") + x + "' has size " + std::to_string(*sizes[i]) + " here but " +
                          std::to_string(*sizes[j]) + " in " + names[j]);
  }
  ContractPlan p;
  auto product = [&](const std::string& group) {
    index_t n = 1;
    for (char x : group) n *= size_in(c.a, a_shape, x).value_or(size_in(c.b, b_shape, x).value_or(1));
    return n;
  };
  p.batch = product(c.batch);
  p.m = product(c.left);
  p.n = product(c.right);
  p.k = product(c.contracted);
  p.a = plan_operand(c.a, c.batch, c.left, c.contracted, a_shape, a_strides, p.batch, false);
  p.b = plan_operand(c.b, c.batch, c.contracted, c.right, b_shape, b_strides, p.batch, false);
  p.out = plan_operand(c.out, c.batch, c.left, c.right, out_shape, out_strides, p.batch, true);
  return p;
}

namespace {

// Calls f(tensor element offset, buffer element index) for every element, the buffer holding the
// tensor's axes in `order`, row-major.
template <class F>
void for_each_element(const std::vector<index_t>& shape, const std::vector<index_t>& strides,
                      const std::vector<int>& order, F f) {
  index_t total = 1;
  for (index_t n : shape) total *= n;
  std::vector<index_t> at(order.size(), 0);
  index_t offset = 0;
  for (index_t i = 0; i < total; ++i) {
    f(offset, i);
    for (std::size_t d = order.size(); d-- > 0;) {  // the next index, last axis fastest
      const std::size_t axis = std::size_t(order[d]);
      if (++at[d] < shape[axis]) {
        offset += strides[axis];
        break;
      }
      offset -= (shape[axis] - 1) * strides[axis];
      at[d] = 0;
    }
  }
}

// Whether `p` is device memory, in a build with the CUDA backend.
bool on_device(const void* p) {
  if constexpr (config::cuda) return cuda_detail::is_device_pointer(p);
  return false;
}

// The buffer's strides: contiguous over the tensor's axes taken in `order`, returned per tensor axis.
std::vector<index_t> buffer_strides(const std::vector<index_t>& shape, const std::vector<int>& order) {
  std::vector<index_t> ordered;
  for (int axis : order) ordered.push_back(shape[std::size_t(axis)]);
  const std::vector<index_t> contiguous = contiguous_strides(ordered);
  std::vector<index_t> strides(shape.size());
  for (std::size_t d = 0; d < order.size(); ++d) strides[std::size_t(order[d])] = contiguous[d];
  return strides;
}

}  // namespace

OperandCopy::OperandCopy(const Context& ctx, const void* tensor, std::size_t bytes) {
  if constexpr (config::cuda) {
    if (on_device(tensor)) {
      device_ = cuda_detail::workspace_block(bytes, ctx.cuda_stream);
      data_ = device_.get();
      return;
    }
  }
  host_.resize(bytes);
  data_ = host_.data();
}

void gather(const Context& ctx, const void* tensor, const std::vector<index_t>& shape,
            const std::vector<index_t>& strides, const std::vector<int>& order, std::size_t element, void* buffer) {
  if constexpr (config::cuda) {
    if (on_device(tensor))
      return cuda_detail::strided_copy(tensor, strides, buffer, buffer_strides(shape, order), shape, element, ctx.cuda_stream);
  }
  const char* src = static_cast<const char*>(tensor);
  char* dst = static_cast<char*>(buffer);
  for_each_element(shape, strides, order, [&](index_t offset, index_t i) {
    std::memcpy(dst + std::size_t(i) * element, src + std::ptrdiff_t(offset) * std::ptrdiff_t(element), element);
  });
}

void scatter(const Context& ctx, const void* buffer, const std::vector<index_t>& shape,
             const std::vector<index_t>& strides, const std::vector<int>& order, std::size_t element, void* tensor) {
  if constexpr (config::cuda) {
    if (on_device(tensor))
      return cuda_detail::strided_copy(buffer, buffer_strides(shape, order), tensor, strides, shape, element, ctx.cuda_stream);
  }
  const char* src = static_cast<const char*>(buffer);
  char* dst = static_cast<char*>(tensor);
  for_each_element(shape, strides, order, [&](index_t offset, index_t i) {
    std::memcpy(dst + std::ptrdiff_t(offset) * std::ptrdiff_t(element), src + std::size_t(i) * element, element);
  });
}

}  // namespace detail

}  // namespace ringmm
