// ringmm einsum: a tensor contraction over a semiring on .npy files. The operands are contracted
// pair by pair from the left (ringmm::contract); before each pair, an index that no later operand
// and not the output needs is ⊕-reduced away (a contraction with a vector of 1̄), and a repeated
// index within one operand is read as its diagonal (a strided view). ringmm.einsum (Python) adds
// contraction paths, '...' and gradients; this command keeps the order it is given.
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "measure/timer.hpp"
#include "ringmm/contract.hpp"
#include "ringmm/npy.hpp"
#include "ringmm/ringmm.hpp"
#include "support.hpp"

namespace ringmm::tools {

namespace {

// The expression: one term per operand (letters), and the output's term.
struct Expression {
  std::vector<std::string> terms;
  std::string out;
};

index_t element_count(const std::vector<index_t>& shape) {
  index_t count = 1;
  for (index_t d : shape) count *= d;
  return count;
}

bool is_index(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Parses SPEC for `operands` files. Without "->" the output is numpy's: the indices that appear
// once, in alphabetical order.
Expression parse_expression(const std::string& spec, std::size_t operands) {
  auto bad = [&](const std::string& why) -> UsageError { return UsageError("SPEC", "'" + spec + "': " + why); };
  if (spec.find("...") != std::string::npos)
    throw bad("'...' is not taken by the command line: name every axis (ringmm.einsum in Python takes it)");
  const std::size_t arrow = spec.find("->");
  const std::string inputs = spec.substr(0, arrow);
  Expression e;
  std::size_t start = 0;
  for (std::size_t comma; (comma = inputs.find(',', start)) != std::string::npos; start = comma + 1)
    e.terms.push_back(inputs.substr(start, comma - start));
  e.terms.push_back(inputs.substr(start));
  if (e.terms.size() != operands)
    throw bad("names " + std::to_string(e.terms.size()) + " operand" + (e.terms.size() == 1 ? "" : "s") + " but " +
              std::to_string(operands) + " file" + (operands == 1 ? " was" : "s were") + " given");
  for (std::size_t i = 0; i < e.terms.size(); ++i)
    for (char c : e.terms[i])
      if (!is_index(c))
        throw bad("operand " + std::to_string(i + 1) + "'s subscript '" + e.terms[i] + "' has '" + std::string(1, c) +
                  "', which is not a letter");
  auto count = [&](char c) {
    std::size_t n = 0;
    for (const std::string& t : e.terms) n += std::size_t(std::count(t.begin(), t.end(), c));
    return n;
  };
  if (arrow == std::string::npos) {
    for (const std::string& t : e.terms)
      for (char c : t)
        if (count(c) == 1) e.out += c;
    std::sort(e.out.begin(), e.out.end());
    return e;
  }
  e.out = spec.substr(arrow + 2);
  for (std::size_t i = 0; i < e.out.size(); ++i) {
    const char c = e.out[i];
    if (!is_index(c)) throw bad("the output's subscript has '" + std::string(1, c) + "', which is not a letter");
    if (e.out.find(c, i + 1) != std::string::npos) throw bad("the output repeats index '" + std::string(1, c) + "'");
    if (count(c) == 0) throw bad("the output's index '" + std::string(1, c) + "' is in no operand");
  }
  return e;
}

// An operand or intermediate: a strided view of `storage` (or of a file's bytes) whose axes are
// named by `term`, each letter once.
template <class T> struct Tensor {
  std::string term;
  std::vector<index_t> shape, strides;
  const T* data = nullptr;
  std::vector<T> storage;  // an intermediate's own elements; empty for a view of a file

  TensorView<const T> view() const { return {data, shape, strides}; }
  index_t size_of(char index) const { return shape[term.find(index)]; }
};

// The tensor read from `file` with its term; a repeated letter takes the diagonal: one axis whose
// stride is the sum of the repeated axes' strides.
template <class T> Tensor<T> operand_view(const npy::Array& file, const std::string& term) {
  const std::vector<index_t> strides = contiguous_strides(file.shape);
  Tensor<T> t;
  t.data = reinterpret_cast<const T*>(file.data.data());
  for (std::size_t axis = 0; axis < term.size(); ++axis) {
    const std::size_t seen = t.term.find(term[axis]);
    if (seen != std::string::npos) {
      t.strides[seen] += strides[axis];
      continue;
    }
    t.term += term[axis];
    t.shape.push_back(file.shape[axis]);
    t.strides.push_back(strides[axis]);
  }
  return t;
}

// Refuses an intermediate that cannot fit in this machine's memory before allocating it.
void check_room(const std::vector<index_t>& shape, std::size_t element, const std::string& what) {
  std::optional<index_t> bytes = index_t(element);
  double wanted = double(element);
  for (index_t d : shape) {
    if (bytes) bytes = checked_mul(*bytes, d);
    wanted *= double(d);
  }
  const double memory = machine_memory_bytes();
  if (!bytes || (memory > 0 && double(*bytes) > memory))
    throw Error(Errc::out_of_memory, what,
                "would be " + bytes_text(wanted) + ", more than this machine's " + bytes_text(memory) + " of memory");
}

struct Run {
  Context ctx;
  int steps = 0;
};

// a ⊗ b contracted to `out_term` (ringmm::contract), into a new tensor; prints the step.
template <class S>
Tensor<element_t<S>> contract_step(Run& run, const Tensor<element_t<S>>& a, const Tensor<element_t<S>>& b,
                                   const std::string& out_term) {
  using T = element_t<S>;
  Tensor<T> c;
  c.term = out_term;
  for (char x : out_term) c.shape.push_back(a.term.find(x) != std::string::npos ? a.size_of(x) : b.size_of(x));
  const std::string spec = a.term + "," + b.term + "->" + out_term;
  check_room(c.shape, sizeof(T), "the intermediate " + out_term + " of step " + std::to_string(run.steps + 1) + " (" + spec + ")");
  c.strides = contiguous_strides(c.shape);
  c.storage.resize(std::size_t(element_count(c.shape)));
  c.data = c.storage.data();
  const double seconds = measure::HostClock{}(
      [&] { contract<S>(run.ctx, spec, a.view(), b.view(), TensorView<T>{c.storage.data(), c.shape, c.strides}); });
  std::cout << "step " << ++run.steps << "    " << spec << "  " << fixed(seconds * 1e3, 3) << " ms\n";
  return c;
}

// ⊕-reduces the indices of t that `keep` lacks: a contraction with a tensor of 1̄ over them.
template <class S> Tensor<element_t<S>> reduce(Run& run, Tensor<element_t<S>> t, const std::string& keep) {
  using T = element_t<S>;
  Tensor<T> ones;
  std::string kept;
  for (std::size_t axis = 0; axis < t.term.size(); ++axis) {
    if (keep.find(t.term[axis]) != std::string::npos) {
      kept += t.term[axis];
      continue;
    }
    ones.term += t.term[axis];
    ones.shape.push_back(t.shape[axis]);
  }
  if (ones.term.empty()) return t;
  ones.strides = contiguous_strides(ones.shape);
  ones.storage.assign(std::size_t(element_count(ones.shape)), S::one());
  ones.data = ones.storage.data();
  return contract_step<S>(run, t, ones, kept);
}

// The letters of `term` that are in `keep`, in term's order.
std::string kept_of(const std::string& term, const std::string& keep) {
  std::string kept;
  for (char x : term)
    if (keep.find(x) != std::string::npos) kept += x;
  return kept;
}

template <class S>
int run_einsum(const Context& ctx, const Expression& e, const std::vector<npy::Array>& files, const std::string& out_path) {
  using T = element_t<S>;
  Run run{ctx};
  // What the operands from i on, and the output, still need.
  auto needed_from = [&](std::size_t i) {
    std::string letters = e.out;
    for (std::size_t j = i; j < e.terms.size(); ++j) letters += e.terms[j];
    return letters;
  };
  const double seconds = measure::HostClock{}([&] {
    Tensor<T> acc = reduce<S>(run, operand_view<T>(files[0], e.terms[0]), needed_from(1));
    for (std::size_t i = 1; i < files.size(); ++i) {
      const std::string later = needed_from(i + 1);
      Tensor<T> next = reduce<S>(run, operand_view<T>(files[i], e.terms[i]), acc.term + later);
      std::string out_term = kept_of(acc.term, later);  // then next's new indices that are still needed
      for (char x : next.term)
        if (acc.term.find(x) == std::string::npos && later.find(x) != std::string::npos) out_term += x;
      acc = contract_step<S>(run, acc, next, out_term);
    }
    acc = reduce<S>(run, std::move(acc), e.out);
    // The output's axis order: a copy in that order.
    std::vector<int> order;
    std::vector<index_t> shape;
    for (char x : e.out) {
      order.push_back(int(acc.term.find(x)));
      shape.push_back(acc.size_of(x));
    }
    std::vector<T> result(static_cast<std::size_t>(element_count(shape)));
    detail::gather(run.ctx, acc.data, acc.shape, acc.strides, order, sizeof(T), result.data());
    npy::write_array(out_path, dtype_of<T>::value, shape, result.data());
    std::cout << "semiring  " << to_string(S::kind) << " (" << to_string(dtype_of<T>::value) << ")\n"
              << "backend   " << to_string(run.ctx.resolved_backend()) << "\n";
    std::string dims_text;
    for (index_t d : shape) dims_text += (dims_text.empty() ? "" : "x") + std::to_string(d);
    std::cout << "wrote     " << out_path << " (" << (shape.empty() ? "scalar" : dims_text) << " "
              << to_string(dtype_of<T>::value) << ")\n";
  });
  std::cout << "time      " << fixed(seconds * 1e3, 3) << " ms (reading the files aside)\n";
  return 0;
}

}  // namespace

int einsum_command(const Args& args) {
  // SPEC and the operand files are positional; the rest are options.
  Args options;
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool is_option = args[i].size() > 2 && args[i].compare(0, 2, "--") == 0;
    if (!is_option) {
      positional.push_back(args[i]);
      continue;
    }
    options.push_back(args[i]);
    const bool has_value = args[i].find('=') == std::string::npos && args[i] != "--help";
    if (has_value && i + 1 < args.size()) options.push_back(args[++i]);
  }
  const Options opt(options, {{"out", true}, {"semiring", true}, {"backend", true}});
  if (positional.empty()) throw UsageError("SPEC", "no expression given (ringmm einsum 'ij,jk->ik' A.npy B.npy --out C.npy)");
  if (positional.size() == 1) throw UsageError("FILE", "no operand files given after '" + positional[0] + "'");
  const std::string out_path = opt.required("out");
  const SemiringKind kind = parse_semiring(opt.get_or("semiring", "max-plus"), "--semiring");
  Context ctx;
  ctx.backend = parse_backend(opt.get_or("backend", "auto"), "--backend");
  ctx.on_notice = [](std::string_view note) { std::cerr << "ringmm einsum: note: " << note << "\n"; };

  const std::vector<std::string> paths(positional.begin() + 1, positional.end());
  const Expression e = parse_expression(positional[0], paths.size());
  std::vector<npy::Array> files;
  for (const std::string& path : paths) files.push_back(npy::read_array(path));

  // Element types, ranks and index sizes, each mistake naming its file.
  const DType element = files[0].dtype;
  std::string letters;
  std::vector<index_t> sizes;
  std::vector<std::string> size_source;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const npy::Array& f = files[i];
    if (f.dtype != element)
      throw Error(Errc::unsupported, paths[i],
                  "holds " + std::string(to_string(f.dtype)) + " but " + paths[0] + " holds " +
                      std::string(to_string(element)) + " (ringmm does not convert element types; save the arrays with one dtype)");
    if (f.dtype == DType::i16x2) throw Error(Errc::unsupported, paths[i], "holds packed i16x2 pairs; einsum takes plain element types");
    if (f.shape.size() != e.terms[i].size())
      throw Error(Errc::dimension_mismatch, paths[i],
                  "has rank " + std::to_string(f.shape.size()) + " but its subscript '" + e.terms[i] + "' names " +
                      std::to_string(e.terms[i].size()) + " ax" + (e.terms[i].size() == 1 ? "is" : "es"));
    for (std::size_t axis = 0; axis < f.shape.size(); ++axis) {
      const char x = e.terms[i][axis];
      const std::size_t at = letters.find(x);
      if (at == std::string::npos) {
        letters += x;
        sizes.push_back(f.shape[axis]);
        size_source.push_back(paths[i]);
      } else if (sizes[at] != f.shape[axis]) {
        throw Error(Errc::dimension_mismatch, paths[i],
                    "index '" + std::string(1, x) + "' is " + std::to_string(f.shape[axis]) + " here but " +
                        std::to_string(sizes[at]) + " in " + (size_source[at] == paths[i] ? "an earlier axis" : size_source[at]));
      }
    }
  }
  if (!is_supported(kind, element)) throw Error(Errc::unsupported, paths[0], unsupported_message(kind, element));
  return visit_semiring(kind, element, [&](auto tag) { return run_einsum<typename decltype(tag)::type>(ctx, e, files, out_path); });
}

}  // namespace ringmm::tools
