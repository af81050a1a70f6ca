// ringmm multiply: C = alpha ⊗ (op(A) ⊗ op(B)) ⊕ beta ⊗ C0 over a semiring, on .npy files.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "measure/timer.hpp"
#include "ringmm/npy.hpp"
#include "ringmm/ringmm.hpp"
#include "support.hpp"

namespace ringmm::tools {

namespace {

struct MultiplyRequest {
  std::string a_path, b_path, out_path;
  std::optional<std::string> c_path;
  SemiringKind kind = SemiringKind::plus_times;
  bool trans_a = false, trans_b = false, check = false;
  std::optional<double> alpha, beta;
  Context ctx;
};

std::string dims(index_t rows, index_t cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

// A compact row-major view; the leading dimension stays >= 1 for matrices with no columns.
template <class T> MatrixView<T> dense_view(T* data, index_t rows, index_t cols) {
  return {data, rows, cols, std::max<index_t>(1, cols), Layout::row_major};
}

// Errors from gemm name its arguments A, B, C; the user knows them by their files.
[[noreturn]] void rethrow_with_files(const Error& e, const MultiplyRequest& req) {
  std::string subject = e.subject();
  if (subject == "A") subject = req.a_path;
  else if (subject == "B") subject = req.b_path;
  else if (subject == "C" && req.c_path) subject = *req.c_path;
  const std::string what = e.what();
  const std::string message = e.subject().empty() ? what : what.substr(e.subject().size() + 2);
  throw Error(e.code(), subject, message);
}

// "37x29 (A.npy, transposed)": op(X)'s shape and where it came from.
std::string op_text(index_t rows, index_t cols, const std::string& path, bool transposed) {
  return dims(rows, cols) + " (" + path + (transposed ? ", transposed)" : ")");
}

// C (and, with --check, the reference product beside it) is held in memory: refuse a product
// that cannot fit before allocating, naming its size, rather than failing inside new or wrapping
// m·n round to a small count. Returns C's element count.
std::size_t room_for_c(const MultiplyRequest& req, index_t m, index_t n, DType type) {
  const int copies = req.check ? 2 : 1;
  const std::optional<index_t> bytes = detail::checked_mul(m, n, dtype_size(type), copies);
  const double memory = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGESIZE));
  if (bytes && (memory <= 0 || double(*bytes) <= memory)) return std::size_t(m) * std::size_t(n);
  throw Error(Errc::out_of_memory, req.out_path,
              "C would be " + dims(m, n) + " " + std::string(to_string(type)) + " = " +
                  detail::bytes_text(double(m) * double(n) * double(dtype_size(type))) +
                  (req.check ? " (twice that with --check)" : "") + ", more than this machine's " +
                  detail::bytes_text(memory) + " of memory");
}

template <class S>
int run_multiply(const MultiplyRequest& req, npy::Matrix& a, npy::Matrix& b, std::optional<npy::Matrix>& c0) {
  using T = typename S::value_type;
  const Op op_a = req.trans_a ? Op::T : Op::N, op_b = req.trans_b ? Op::T : Op::N;
  const index_t m = req.trans_a ? a.cols : a.rows, k = req.trans_a ? a.rows : a.cols;
  const index_t kb = req.trans_b ? b.cols : b.rows, n = req.trans_b ? b.rows : b.cols;
  // Both shapes can read alike (37x29 and 37x29), so name the two numbers that differ.
  if (k != kb)
    throw Error(Errc::dimension_mismatch, req.b_path,
                "op(A) is " + op_text(m, k, req.a_path, req.trans_a) + " but op(B) is " +
                    op_text(kb, n, req.b_path, req.trans_b) + ": inner dimensions " + std::to_string(k) + " and " +
                    std::to_string(kb) + " differ" + (req.trans_a || req.trans_b ? "" : " (--transa/--transb transpose)"));
  if (c0 && (c0->rows != m || c0->cols != n))
    throw Error(Errc::dimension_mismatch, *req.c_path, "C0 is " + dims(c0->rows, c0->cols) + " but the product is " + dims(m, n));
  const std::size_t c_count = room_for_c(req, m, n, dtype_of<T>::value);

  const T alpha = req.alpha ? scalar_from_double<S>(*req.alpha, "--alpha") : S::one();
  const T beta = req.beta ? scalar_from_double<S>(*req.beta, "--beta") : (c0 ? S::one() : S::zero());
  std::vector<T> c(c_count);
  if (c0) std::copy_n(c0->view<T>().data, c.size(), c.begin());
  const MatrixView<const T> a_view = dense_view<T>(a.view<T>().data, a.rows, a.cols);
  const MatrixView<const T> b_view = dense_view<T>(b.view<T>().data, b.rows, b.cols);
  const MatrixView<T> c_view = dense_view(c.data(), m, n);

  const Backend backend = req.ctx.resolved_backend();
  double seconds = 0;
  try {
    seconds = measure::HostClock{}([&] { gemm<S>(req.ctx, op_a, a_view, op_b, b_view, c_view, alpha, beta); });
  } catch (const Error& e) {
    rethrow_with_files(e, req);
  }

  std::cout << "semiring  " << to_string(S::kind) << " (" << to_string(dtype_of<T>::value) << ")\n"
            << "shape     M=" << m << " N=" << n << " K=" << k << "  (op(A) " << to_string(op_a) << ", op(B) "
            << to_string(op_b) << ")\n"
            << "backend   " << to_string(backend) << "\n"
            << "time      " << fixed(seconds * 1e3, 3) << " ms"
            << (backend == Backend::cuda ? " (one call on host matrices: host<->device copies included)" : "") << "\n"
            << "rate      "
            << (m > 0 && n > 0 && k > 0 ? scientific(double(m) * double(n) * double(k) * lanes(dtype_of<T>::value) / seconds) + " updates/s" : "-")
            << "\n";

  if (req.check) {
    std::vector<T> expected(c_count);
    if (c0) std::copy_n(c0->view<T>().data, expected.size(), expected.begin());
    const auto p = detail::make_problem<S>(op_a, a_view, op_b, b_view, dense_view(expected.data(), m, n), alpha, beta);
    parallel_reference<S>(p);
    const CheckResult result = compare_results<S>(p, expected, c, c0 ? c0->view<T>().data : nullptr);
    std::cout << "check     " << (result.pass ? "PASS" : "FAIL") << (result.exact ? " (exact)" : " (within rounding bound)")
              << "\n";
    if (!result.pass) {
      std::cout.flush();
      print_error("multiply", "--check: " + result.detail + "; " + req.out_path + " not written");
      return 1;
    }
  }
  npy::write(req.out_path, dtype_of<T>::value, m, n, c.data());
  std::cout << "wrote     " << req.out_path << " (" << dims(m, n) << " " << to_string(dtype_of<T>::value) << ")\n";
  return 0;
}

}  // namespace

int multiply_command(const Args& args) {
  const Options opt(args, {{"a", true}, {"b", true}, {"out", true}, {"c", true}, {"semiring", true}, {"type", true},
                           {"transa", false}, {"transb", false}, {"alpha", true}, {"beta", true}, {"backend", true},
                           {"border", true}, {"own-kernels", false}, {"check", false}});
  MultiplyRequest req;
  req.a_path = opt.required("a");
  req.b_path = opt.required("b");
  req.out_path = opt.required("out");
  req.c_path = opt.get("c");
  req.kind = parse_semiring(opt.get_or("semiring", "plus-times"), "--semiring");
  std::optional<DType> type;
  if (auto t = opt.get("type")) {
    type = parse_dtype(*t, "--type");
    if (!is_supported(req.kind, *type)) throw UsageError("--type", unsupported_message(req.kind, *type));
  }
  req.trans_a = opt.flag("transa");
  req.trans_b = opt.flag("transb");
  req.check = opt.flag("check");
  if (opt.has("alpha")) req.alpha = opt.real_or("alpha", 0);
  if (opt.has("beta")) {
    if (!req.c_path) throw UsageError("--beta", "needs --c (there is no C0 to scale)");
    req.beta = opt.real_or("beta", 0);
  }
  req.ctx.backend = parse_backend(opt.get_or("backend", "auto"), "--backend");
  req.ctx.border = parse_border(opt.get_or("border", "auto"), "--border");
  req.ctx.vendor_blas = !opt.flag("own-kernels");
  req.ctx.on_notice = [](std::string_view note) { std::cerr << "ringmm multiply: note: " << note << "\n"; };

  npy::Matrix a = npy::read(req.a_path);
  npy::Matrix b = npy::read(req.b_path);
  std::optional<npy::Matrix> c0;
  if (req.c_path) c0 = npy::read(*req.c_path);

  const DType element = type.value_or(a.dtype);
  auto require_type = [&](const npy::Matrix& x, const std::string& path) {
    if (x.dtype == element) return;
    const std::string why = type ? "--type is " + std::string(to_string(*type))
                                 : req.a_path + " holds " + std::string(to_string(a.dtype));
    throw Error(Errc::unsupported, path,
                "holds " + std::string(to_string(x.dtype)) + " but " + why +
                    " (ringmm does not convert element types; save the arrays with one dtype)");
  };
  require_type(a, req.a_path);
  require_type(b, req.b_path);
  if (c0) require_type(*c0, *req.c_path);
  if (!is_supported(req.kind, element)) throw Error(Errc::unsupported, req.a_path, unsupported_message(req.kind, element));

  return visit_semiring(req.kind, element, [&](auto tag) {
    return run_multiply<typename decltype(tag)::type>(req, a, b, c0);
  });
}

}  // namespace ringmm::tools
