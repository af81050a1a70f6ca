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
  // --type b1: the files hold bytes packed by np.packbits, `a_cols` and `b_cols` bits per row.
  bool b1 = false;
  index_t a_cols = 0, b_cols = 0;
  BitOrder bit_order = BitOrder::big;
  bool packed_out = false;  // or-and: write C packed too
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

// ---- b1: packed operands (ringmm/bits.hpp) --------------------------------------------------------

// An owning bit matrix.
struct Bits {
  std::vector<bit_word> words;
  BitMatrixView<bit_word> view;
  Bits(index_t rows, index_t cols)
      : words(std::size_t(std::max<index_t>(1, rows * words_for_bits(cols)))), view(bit_matrix(words.data(), rows, cols)) {}
  Bits(const Bits&) = delete;
  Bits(Bits&&) = default;  // the words keep their address
};

std::string bits_per_row(index_t bytes) {
  return bytes == 0 ? "no bits" : std::to_string(8 * bytes - 7) + " to " + std::to_string(8 * bytes) + " bits";
}

// The bytes of a packed file, checked: uint8 (not numpy bools), ceil(cols / 8) per row.
MatrixView<const std::uint8_t> packed_bytes(npy::Matrix& x, const std::string& path, index_t cols, const std::string& option) {
  if (x.booleans)
    throw Error(Errc::unsupported, path,
                "holds numpy bools; --type b1 reads uint8 bytes packed by np.packbits (np.packbits(x, axis=1)), or "
                "leave out --type b1 to multiply the bools as u8");
  if (x.dtype != DType::u8)
    throw Error(Errc::unsupported, path,
                "holds " + std::string(to_string(x.dtype)) + "; --type b1 reads uint8 bytes packed by np.packbits");
  const index_t bytes = bytes_for_bits(cols);
  if (x.cols != bytes)
    throw Error(Errc::dimension_mismatch, path,
                "has " + std::to_string(x.cols) + " bytes per row, which hold " + bits_per_row(x.cols) + ", but " + option +
                    " is " + std::to_string(cols) + " (np.packbits packs ceil(cols / 8) = " + std::to_string(bytes) +
                    " bytes per row)");
  return dense_view<const std::uint8_t>(x.view<const std::uint8_t>().data, x.rows, x.cols);
}

// The operand packed along K from a file of `cols` bits per row: the file's rows as they are, or,
// with `transpose`, the rows of its transpose (unpacked and packed again: one more copy).
Bits packed_operand(npy::Matrix& x, const std::string& path, index_t cols, const std::string& option, BitOrder order,
                    bool transpose) {
  const MatrixView<const std::uint8_t> bytes = packed_bytes(x, path, cols, option);
  Bits file(x.rows, cols);
  bits_from_packbits(bytes, order, file.view);
  if (!transpose) return file;
  std::vector<std::uint8_t> booleans(std::size_t(x.rows * cols));
  unpack_bits(file.view, dense_view(booleans.data(), x.rows, cols));
  Bits t(cols, x.rows);
  pack_bits(MatrixView<const std::uint8_t>{booleans.data(), cols, x.rows, std::max<index_t>(1, cols), Layout::col_major},
            t.view);
  return t;
}

std::vector<std::uint8_t> unpacked(const BitMatrixView<const bit_word>& x) {
  std::vector<std::uint8_t> out(std::size_t(x.rows * x.cols));
  unpack_bits(x, dense_view(out.data(), x.rows, x.cols));
  return out;
}

// or-and (gemm_b1: C as u8 0/1, or packed with --packed-out) and plus-times (gemm_b1_count: C as
// int32 counts) on packed files. The product wants A (M×K) and Bᵀ (N×K) packed along K: the A file
// as it is, the B file with --transb (it holds Bᵀ); the other orientations are repacked.
int run_multiply_b1(const MultiplyRequest& req, npy::Matrix& a_file, npy::Matrix& b_file, std::optional<npy::Matrix>& c0) {
  const bool count = req.kind == SemiringKind::plus_times;
  // The files' bits are host memory, which the library's CUDA b1 product does not read.
  if (req.ctx.backend == Backend::cuda)
    throw UsageError("--backend", "b1 products from files run on the CPU (gemm_b1 runs on CUDA for device memory)");
  const Bits a = packed_operand(a_file, req.a_path, req.a_cols, "--a-cols", req.bit_order, req.trans_a);
  const Bits bt = packed_operand(b_file, req.b_path, req.b_cols, "--b-cols", req.bit_order, !req.trans_b);
  const index_t m = a.view.rows, k = a.view.cols, n = bt.view.rows;
  if (bt.view.cols != k)
    throw Error(Errc::dimension_mismatch, req.b_path,
                "op(A) is " + op_text(m, k, req.a_path, req.trans_a) + " but op(B) is " +
                    op_text(bt.view.cols, n, req.b_path, req.trans_b) + ": inner dimensions " + std::to_string(k) +
                    " and " + std::to_string(bt.view.cols) + " differ (--a-cols and --b-cols give the files' bits per row)");
  const DType c_type = count ? DType::i32 : DType::u8;
  const index_t c_file_cols = req.packed_out ? bytes_for_bits(n) : n;
  room_for_c(req, m, c_file_cols, c_type);
  if (c0) {
    if (c0->dtype != c_type || (req.packed_out && c0->booleans))
      throw Error(Errc::unsupported, *req.c_path,
                  "holds " + std::string(c0->booleans ? "numpy bools" : to_string(c0->dtype)) + " but C is " +
                      (req.packed_out ? "packed uint8 (--packed-out)" : std::string(to_string(c_type))));
    if (c0->rows != m || c0->cols != c_file_cols)
      throw Error(Errc::dimension_mismatch, *req.c_path,
                  "C0 is " + dims(c0->rows, c0->cols) + " but " +
                      (req.packed_out ? "with --packed-out C is " + dims(m, c_file_cols) + " bytes (" + dims(m, n) + " bits)"
                                      : "the product is " + dims(m, n)));
  }
  auto scalar = [&](const std::optional<double>& x, const char* option, bool fallback) -> std::int32_t {
    if (!x) return fallback;
    if (count) return scalar_from_double<PlusTimes<std::int32_t>>(*x, option);
    return scalar_from_double<OrAnd>(*x, option) != 0;  // nonzero is true, as for u8 or-and
  };
  const std::int32_t alpha = scalar(req.alpha, "--alpha", true), beta = scalar(req.beta, "--beta", c0.has_value());

  // C, holding C0 where there is one; u8 or i32 elements, or b1 words.
  std::vector<std::uint8_t> c_u8;
  std::vector<std::int32_t> c_count;
  Bits c_bits(req.packed_out ? m : 0, req.packed_out ? n : 0);
  if (count) {
    c_count.resize(std::size_t(m * n));
    if (c0) std::copy_n(c0->view<std::int32_t>().data, c_count.size(), c_count.begin());
  } else if (req.packed_out) {
    if (c0) bits_from_packbits(packed_bytes(*c0, *req.c_path, n, "C's columns"), req.bit_order, c_bits.view);
  } else {
    c_u8.resize(std::size_t(m * n));
    if (c0) std::copy_n(c0->view<std::uint8_t>().data, c_u8.size(), c_u8.begin());
  }
  std::vector<std::uint8_t> c0_booleans;  // C0 as u8, for --check
  if (req.check && c0 && !count) c0_booleans = req.packed_out ? unpacked(c_bits.view) : c_u8;
  const std::vector<std::int32_t> c0_counts = req.check ? c_count : std::vector<std::int32_t>();

  double seconds = 0;
  try {
    seconds = measure::HostClock{}([&] {
      if (count) gemm_b1_count(req.ctx, a.view, bt.view, dense_view(c_count.data(), m, n), alpha, beta);
      else if (req.packed_out) gemm_b1(req.ctx, a.view, bt.view, c_bits.view, alpha != 0, beta != 0);
      else gemm_b1(req.ctx, a.view, bt.view, dense_view(c_u8.data(), m, n), alpha != 0, beta != 0);
    });
  } catch (const Error& e) {
    rethrow_with_files(e, req);
  }
  std::cout << "semiring  " << to_string(req.kind) << " (b1, bitorder " << to_string(req.bit_order) << ")\n"
            << "shape     M=" << m << " N=" << n << " K=" << k << "  (A and B^T packed along K)\n"
            << "backend   cpu\n"
            << "time      " << fixed(seconds * 1e3, 3) << " ms\n"
            << "rate      "
            << (m > 0 && n > 0 && k > 0 ? scientific(double(m) * double(n) * double(k) / seconds) + " updates/s" : "-")
            << "\n";

  if (req.check) {  // the u8 or-and (or i32 plus-times) reference on the unpacked booleans
    const std::vector<std::uint8_t> a_u8 = unpacked(a.view), bt_u8 = unpacked(bt.view);
    CheckResult result;
    if (count) {
      const std::vector<std::int32_t> a_i32(a_u8.begin(), a_u8.end()), bt_i32(bt_u8.begin(), bt_u8.end());
      std::vector<std::int32_t> expected = c0_counts;
      const auto p = detail::make_problem<PlusTimes<std::int32_t>>(Op::N, dense_view(a_i32.data(), m, k), Op::T,
                                                                    dense_view(bt_i32.data(), n, k),
                                                                    dense_view(expected.data(), m, n), alpha, beta);
      parallel_reference<PlusTimes<std::int32_t>>(p);
      result = compare_results<PlusTimes<std::int32_t>>(p, expected, c_count, c0 ? c0_counts.data() : nullptr);
    } else {
      std::vector<std::uint8_t> expected = c0 ? c0_booleans : std::vector<std::uint8_t>(std::size_t(m * n));
      const auto p = detail::make_problem<OrAnd>(Op::N, dense_view(a_u8.data(), m, k), Op::T, dense_view(bt_u8.data(), n, k),
                                                 dense_view(expected.data(), m, n), std::uint8_t(alpha), std::uint8_t(beta));
      parallel_reference<OrAnd>(p);
      result = compare_results<OrAnd>(p, expected, req.packed_out ? unpacked(c_bits.view) : c_u8,
                                      c0 ? c0_booleans.data() : nullptr);
    }
    std::cout << "check     " << (result.pass ? "PASS (exact)" : "FAIL") << "\n";
    if (!result.pass) {
      std::cout.flush();
      print_error("multiply", "--check: " + result.detail + "; " + req.out_path + " not written");
      return 1;
    }
  }
  if (count) {
    npy::write(req.out_path, DType::i32, m, n, c_count.data());
  } else if (req.packed_out) {
    std::vector<std::uint8_t> bytes(std::size_t(m * c_file_cols));
    packbits_from_bits(c_bits.view, req.bit_order, dense_view(bytes.data(), m, c_file_cols));
    npy::write(req.out_path, DType::u8, m, c_file_cols, bytes.data());
  } else {
    npy::write(req.out_path, DType::u8, m, n, c_u8.data());
  }
  std::cout << "wrote     " << req.out_path << " ("
            << (req.packed_out ? dims(m, c_file_cols) + " uint8: " + dims(m, n) + " b1 packed, bitorder " +
                                     std::string(to_string(req.bit_order))
                               : dims(m, n) + " " + std::string(to_string(c_type)))
            << ")\n";
  return 0;
}

}  // namespace

int multiply_command(const Args& args) {
  const Options opt(args, {{"a", true}, {"b", true}, {"out", true}, {"c", true}, {"semiring", true}, {"type", true},
                           {"transa", false}, {"transb", false}, {"alpha", true}, {"beta", true}, {"backend", true},
                           {"border", true}, {"own-kernels", false}, {"check", false}, {"a-cols", true},
                           {"b-cols", true}, {"bitorder", true}, {"packed-out", false}});
  MultiplyRequest req;
  req.a_path = opt.required("a");
  req.b_path = opt.required("b");
  req.out_path = opt.required("out");
  req.c_path = opt.get("c");
  req.kind = parse_semiring(opt.get_or("semiring", "plus-times"), "--semiring");
  std::optional<DType> type;
  if (auto t = opt.get("type")) {
    req.b1 = *t == b1_type_name;
    if (!req.b1) type = parse_dtype(*t, "--type");
    if (req.b1 && !b1_supports(req.kind))
      throw UsageError("--type", "b1 products are or-and and plus-times (counts of k where both are true), not " +
                                     std::string(to_string(req.kind)));
    if (!req.b1 && !is_supported(req.kind, *type)) throw UsageError("--type", unsupported_message(req.kind, *type));
  }
  // The packed files' options mean nothing without --type b1, and b1 cannot do without the column counts.
  for (const char* name : {"a-cols", "b-cols", "bitorder", "packed-out"})
    if (opt.has(name) && !req.b1) throw UsageError(std::string("--") + name, "applies to --type b1 (packed operands) only");
  if (req.b1) {
    for (const char* name : {"a-cols", "b-cols"})
      if (!opt.has(name))
        throw UsageError(std::string("--") + name, std::string("--type b1 needs the bits per row of the packed ") +
                                                       (name[0] == 'a' ? "A" : "B") +
                                                       " file (np.packbits pads each row to whole bytes)");
    req.a_cols = opt.integer_or("a-cols", 0, 0, index_t(1) << 40);
    req.b_cols = opt.integer_or("b-cols", 0, 0, index_t(1) << 40);
    const std::string order = opt.get_or("bitorder", "big");
    if (order != "big" && order != "little") throw UsageError("--bitorder", "unknown value '" + order + "' (valid: big, little)");
    req.bit_order = parse_bit_order(order);
    req.packed_out = opt.flag("packed-out");
    if (req.packed_out && req.kind != SemiringKind::or_and)
      throw UsageError("--packed-out", "counts are int32; --packed-out applies to or-and");
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
  if (req.b1) return run_multiply_b1(req, a, b, c0);

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
