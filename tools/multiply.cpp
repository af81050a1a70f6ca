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

// How a --type b1 file packs each row's bits (ringmm/bits.hpp): np.packbits bytes ('|u1', in
// --bitorder) or 32-bit words ('<u4', least significant bit first). Told apart by the file's dtype.
enum class Packing { uint8, uint32 };

std::string_view to_string(Packing packing) { return packing == Packing::uint8 ? "uint8" : "uint32"; }
// Bytes or words per row of `cols` bits.
index_t units_for_bits(Packing packing, index_t cols) {
  return packing == Packing::uint8 ? bytes_for_bits(cols) : words32_for_bits(cols);
}

struct MultiplyRequest {
  std::string a_path, b_path, out_path;
  std::optional<std::string> c_path;
  SemiringKind kind = SemiringKind::plus_times;
  bool trans_a = false, trans_b = false, check = false;
  std::optional<double> alpha, beta;
  Context ctx;
  // --type b1: the files hold bits packed along their rows, `a_cols` and `b_cols` per row.
  bool b1 = false;
  index_t a_cols = 0, b_cols = 0;
  BitOrder bit_order = BitOrder::big;  // of uint8 files
  bool bit_order_given = false;        // an explicit --bitorder big is refused beside uint32 files
  bool packed_out = false;             // or-and: write C packed too
  Packing packed_dtype = Packing::uint8;
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
std::size_t room_for_c(const MultiplyRequest& req, index_t m, index_t n, std::size_t element_size,
                       std::string_view element_name) {
  const int copies = req.check ? 2 : 1;
  const std::optional<index_t> bytes = checked_mul(m, n, index_t(element_size), copies);
  const double memory = machine_memory_bytes();
  if (bytes && (memory <= 0 || double(*bytes) <= memory)) return std::size_t(m) * std::size_t(n);
  throw Error(Errc::out_of_memory, req.out_path,
              "C would be " + dims(m, n) + " " + std::string(element_name) + " = " +
                  bytes_text(double(m) * double(n) * double(element_size)) +
                  (req.check ? " (twice that with --check)" : "") + ", more than this machine's " +
                  bytes_text(memory) + " of memory");
}
std::size_t room_for_c(const MultiplyRequest& req, index_t m, index_t n, DType type) {
  return room_for_c(req, m, n, dtype_size(type), to_string(type));
}

// An int8 file's values once read into i32 (its sentinel already S's 0̄) as int8 again, for the i8
// gemm (ringmm/narrow.hpp), which on the GPU multiplies them as 16-bit lane pairs.
template <class S> std::vector<std::int8_t> int8_values(npy::Matrix& x) {
  const MatrixView<const std::int32_t> v = x.view<const std::int32_t>();
  std::vector<std::int8_t> bytes(std::size_t(x.rows) * std::size_t(x.cols));
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = v.data[i] == S::zero() ? detail::i8_sentinel<S>() : std::int8_t(v.data[i]);
  return bytes;
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

  // Two int8 files multiply from their bytes; the i32 views above stay for --check's reference.
  bool from_int8 = false;
  std::vector<std::int8_t> a8, b8;
  if constexpr (detail::is_tropical_i32_v<S>) {
    from_int8 = a.narrow == NarrowType::i8 && b.narrow == NarrowType::i8;
    if (from_int8) a8 = int8_values<S>(a), b8 = int8_values<S>(b);
  }
  const Backend backend = req.ctx.resolved_backend();
  double seconds = 0;
  try {
    seconds = measure::HostClock{}([&] {
      if constexpr (detail::is_tropical_i32_v<S>)
        if (from_int8)
          return gemm<S>(req.ctx, op_a, dense_view<std::int8_t>(a8.data(), a.rows, a.cols), op_b,
                         dense_view<std::int8_t>(b8.data(), b.rows, b.cols), c_view, alpha, beta);
      gemm<S>(req.ctx, op_a, a_view, op_b, b_view, c_view, alpha, beta);
    });
  } catch (const Error& e) {
    rethrow_with_files(e, req);
  }

  std::cout << "semiring  " << to_string(S::kind) << " (" << to_string(dtype_of<T>::value)
            << (from_int8 ? ", from int8 operands" : "") << ")\n"
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
    const auto p = make_problem<S>(op_a, a_view, op_b, b_view, dense_view(expected.data(), m, n), alpha, beta);
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

// "73 to 80 bits": what `units` bytes or words per row can hold.
std::string bits_per_row(index_t units, Packing packing) {
  const index_t per_unit = packing == Packing::uint8 ? 8 : 32;
  return units == 0 ? "no bits"
                    : std::to_string(per_unit * units - per_unit + 1) + " to " + std::to_string(per_unit * units) + " bits";
}

// An int8 file, read widened to i32 by value: its values widened again by ringmm/narrow.hpp's rule
// for S, which maps int8's own 0̄ sentinel to i32's.
template <class S> void widen_int8_values(npy::Matrix& x) {
  auto* v = reinterpret_cast<std::int32_t*>(x.data.data());
  for (std::size_t i = 0; i < x.data.size() / 4; ++i) v[i] = detail::widen<S>(std::int8_t(v[i]));
}

// The sentinel mapping of an int8 file; semirings without an int8 sentinel refuse it.
void map_int8_sentinel(SemiringKind kind, npy::Matrix& x, const std::string& path) {
  if (x.narrow != NarrowType::i8) return;
  if (kind == SemiringKind::max_plus) return widen_int8_values<MaxPlus<std::int32_t>>(x);
  if (kind == SemiringKind::min_plus) return widen_int8_values<MinPlus<std::int32_t>>(x);
  throw Error(Errc::unsupported, path,
              "holds int8: int8 files multiply in max-plus and min-plus only (-128 is -inf, 127 is +inf); save "
              "them as int32 for " + std::string(to_string(kind)));
}

// The packing of a --type b1 file, from its dtype; any other dtype (numpy bools included) is refused.
Packing packing_of(const npy::Matrix& x, const std::string& path) {
  if (x.booleans)
    throw Error(Errc::unsupported, path,
                "holds numpy bools; --type b1 reads uint8 bytes packed by np.packbits (np.packbits(x, axis=1)) or "
                "uint32 words, or leave out --type b1 to multiply the bools as u8");
  if (x.uint32_words) return Packing::uint32;
  if (x.dtype == DType::u8) return Packing::uint8;
  throw Error(Errc::unsupported, path,
              "holds " + std::string(to_string(x.dtype)) +
                  "; --type b1 reads uint8 bytes packed by np.packbits or uint32 words ('<u4')");
}

// An explicit --bitorder big names the order of np.packbits bytes; 32-bit words have theirs fixed
// (least significant bit first), so a uint32 file beside it is refused rather than read another way.
void require_bit_order_fits(const MultiplyRequest& req, Packing packing, const std::string& path) {
  if (packing == Packing::uint32 && req.bit_order_given && req.bit_order == BitOrder::big)
    throw Error(Errc::unsupported, path,
                "holds uint32 words, whose bits are read least significant first (column c at bit c % 32 of word "
                "c / 32); --bitorder big applies to uint8 files only (leave it out: uint8 files default to big)");
}

// The bits of a packed file of `cols` bits per row (`option` names where cols came from), checked:
// a uint8 or uint32 file with exactly the bytes or words per row that hold them.
Bits file_bits(npy::Matrix& x, const std::string& path, index_t cols, const std::string& option, const MultiplyRequest& req) {
  const Packing packing = packing_of(x, path);
  require_bit_order_fits(req, packing, path);
  const index_t units = units_for_bits(packing, cols);
  if (x.cols != units)
    throw Error(Errc::dimension_mismatch, path,
                "has " + std::to_string(x.cols) + (packing == Packing::uint8 ? " bytes" : " uint32 words") +
                    " per row, which hold " + bits_per_row(x.cols, packing) + ", but " + option + " is " +
                    std::to_string(cols) +
                    (packing == Packing::uint8 ? " (np.packbits packs ceil(cols / 8) = " + std::to_string(units) + " bytes per row)"
                                               : " (32-bit words pack ceil(cols / 32) = " + std::to_string(units) +
                                                     " words per row)"));
  Bits bits(x.rows, cols);
  if (packing == Packing::uint8)
    bits_from_packbits(dense_view<const std::uint8_t>(x.view<const std::uint8_t>().data, x.rows, x.cols), req.bit_order,
                       bits.view);
  else
    bits_from_words32(dense_view<const std::uint32_t>(x.view<const std::uint32_t>().data, x.rows, x.cols), bits.view);
  return bits;
}

// The operand packed along K from a file of `cols` bits per row: the file's rows as they are, or,
// with `transpose`, the rows of its transpose (unpacked and packed again: one more copy).
Bits packed_operand(npy::Matrix& x, const std::string& path, index_t cols, const std::string& option,
                    const MultiplyRequest& req, bool transpose) {
  Bits file = file_bits(x, path, cols, option, req);
  if (!transpose) return file;
  std::vector<std::uint8_t> booleans(std::size_t(x.rows * cols));
  unpack_bits(file.view, dense_view(booleans.data(), x.rows, cols));
  Bits t(cols, x.rows);
  pack_bits(MatrixView<const std::uint8_t>{booleans.data(), cols, x.rows, std::max<index_t>(1, cols), Layout::col_major},
            t.view);
  return t;
}

// "A uint8 (bitorder big), B uint32": how the operand files were packed, for the report.
std::string packing_text(const npy::Matrix& a_file, const npy::Matrix& b_file, BitOrder order) {
  auto one = [&](const npy::Matrix& x) {
    return x.uint32_words ? std::string("uint32") : "uint8 (bitorder " + std::string(to_string(order)) + ")";
  };
  return "A " + one(a_file) + ", B " + one(b_file);
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
  const Bits a = packed_operand(a_file, req.a_path, req.a_cols, "--a-cols", req, req.trans_a);
  const Bits bt = packed_operand(b_file, req.b_path, req.b_cols, "--b-cols", req, !req.trans_b);
  const index_t m = a.view.rows, k = a.view.cols, n = bt.view.rows;
  if (bt.view.cols != k)
    throw Error(Errc::dimension_mismatch, req.b_path,
                "op(A) is " + op_text(m, k, req.a_path, req.trans_a) + " but op(B) is " +
                    op_text(bt.view.cols, n, req.b_path, req.trans_b) + ": inner dimensions " + std::to_string(k) +
                    " and " + std::to_string(bt.view.cols) + " differ (--a-cols and --b-cols give the files' bits per row)");
  const DType c_type = count ? DType::i32 : DType::u8;
  const index_t c_file_cols = req.packed_out ? units_for_bits(req.packed_dtype, n) : n;
  if (req.packed_out) room_for_c(req, m, c_file_cols, req.packed_dtype == Packing::uint8 ? 1 : 4, to_string(req.packed_dtype));
  else room_for_c(req, m, c_file_cols, c_type);
  if (c0 && req.packed_out) {  // packed as the operands are, uint8 or uint32 whatever --packed-dtype says
    const Packing c0_packing = packing_of(*c0, *req.c_path);
    const index_t c0_units = units_for_bits(c0_packing, n);
    if (c0->rows != m || c0->cols != c0_units)
      throw Error(Errc::dimension_mismatch, *req.c_path,
                  "C0 is " + dims(c0->rows, c0->cols) + " but with --packed-out C is " + dims(m, c0_units) +
                      (c0_packing == Packing::uint8 ? " bytes (" : " uint32 words (") + dims(m, n) + " bits)");
  } else if (c0) {
    if (c0->dtype != c_type || c0->uint32_words)
      throw Error(Errc::unsupported, *req.c_path,
                  "holds " + std::string(c0->booleans ? "numpy bools" : to_string(c0->dtype)) + " but C is " +
                      std::string(to_string(c_type)));
    if (c0->rows != m || c0->cols != n)
      throw Error(Errc::dimension_mismatch, *req.c_path, "C0 is " + dims(c0->rows, c0->cols) + " but the product is " + dims(m, n));
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
  Bits c_bits = req.packed_out && c0 ? file_bits(*c0, *req.c_path, n, "C's columns", req)
                                     : Bits(req.packed_out ? m : 0, req.packed_out ? n : 0);
  if (count) {
    c_count.resize(std::size_t(m * n));
    if (c0) std::copy_n(c0->view<std::int32_t>().data, c_count.size(), c_count.begin());
  } else if (!req.packed_out) {
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
  std::cout << "semiring  " << to_string(req.kind) << " (b1: " << packing_text(a_file, b_file, req.bit_order) << ")\n"
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
      const auto p = make_problem<PlusTimes<std::int32_t>>(Op::N, dense_view(a_i32.data(), m, k), Op::T,
                                                           dense_view(bt_i32.data(), n, k),
                                                           dense_view(expected.data(), m, n), alpha, beta);
      parallel_reference<PlusTimes<std::int32_t>>(p);
      result = compare_results<PlusTimes<std::int32_t>>(p, expected, c_count, c0 ? c0_counts.data() : nullptr);
    } else {
      std::vector<std::uint8_t> expected = c0 ? c0_booleans : std::vector<std::uint8_t>(std::size_t(m * n));
      const auto p = make_problem<OrAnd>(Op::N, dense_view(a_u8.data(), m, k), Op::T, dense_view(bt_u8.data(), n, k),
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
  } else if (req.packed_out && req.packed_dtype == Packing::uint32) {
    std::vector<std::uint32_t> words(std::size_t(m * c_file_cols));
    words32_from_bits(c_bits.view, dense_view(words.data(), m, c_file_cols));
    npy::write_uint32(req.out_path, m, c_file_cols, words.data());
  } else if (req.packed_out) {
    std::vector<std::uint8_t> bytes(std::size_t(m * c_file_cols));
    packbits_from_bits(c_bits.view, req.bit_order, dense_view(bytes.data(), m, c_file_cols));
    npy::write(req.out_path, DType::u8, m, c_file_cols, bytes.data());
  } else {
    npy::write(req.out_path, DType::u8, m, n, c_u8.data());
  }
  std::cout << "wrote     " << req.out_path << " ("
            << (!req.packed_out ? dims(m, n) + " " + std::string(to_string(c_type))
                : req.packed_dtype == Packing::uint32
                    ? dims(m, c_file_cols) + " uint32: " + dims(m, n) + " b1 packed, least significant bit first"
                    : dims(m, c_file_cols) + " uint8: " + dims(m, n) + " b1 packed, bitorder " +
                          std::string(to_string(req.bit_order)))
            << ")\n";
  return 0;
}

}  // namespace

int multiply_command(const Args& args) {
  const Options opt(args, {{"a", true}, {"b", true}, {"out", true}, {"c", true}, {"semiring", true}, {"type", true},
                           {"transa", false}, {"transb", false}, {"alpha", true}, {"beta", true}, {"backend", true},
                           {"border", true}, {"own-kernels", false}, {"check", false}, {"a-cols", true},
                           {"b-cols", true}, {"bitorder", true}, {"packed-out", false},
                           {"packed-dtype", true}});
  MultiplyRequest req;
  req.a_path = opt.required("a");
  req.b_path = opt.required("b");
  req.out_path = opt.required("out");
  req.c_path = opt.get("c");
  const ProductOptions product = parse_product_options(opt, req.c_path.has_value(), true);
  req.kind = product.kind, req.b1 = product.b1, req.check = product.check;
  req.trans_a = product.trans_a, req.trans_b = product.trans_b, req.alpha = product.alpha, req.beta = product.beta;
  const std::optional<DType> type = product.type;
  // The packed files' options mean nothing without --type b1, and b1 cannot do without the column counts.
  for (const char* name : {"a-cols", "b-cols", "bitorder", "packed-out", "packed-dtype"})
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
    req.bit_order_given = opt.has("bitorder");
    req.packed_out = opt.flag("packed-out");
    if (req.packed_out && req.kind != SemiringKind::or_and)
      throw UsageError("--packed-out", "counts are int32; --packed-out applies to or-and");
    if (auto dtype = opt.get("packed-dtype")) {
      if (!req.packed_out) throw UsageError("--packed-dtype", "needs --packed-out (it is the dtype of the packed C)");
      if (*dtype == "uint32") req.packed_dtype = Packing::uint32;
      else if (*dtype != "uint8") throw UsageError("--packed-dtype", "unknown value '" + *dtype + "' (valid: uint8, uint32)");
    }
    if (req.packed_dtype == Packing::uint32 && req.bit_order_given && req.bit_order == BitOrder::big)
      throw UsageError("--bitorder", "big applies to uint8 files only; --packed-dtype uint32 writes 32-bit words, least "
                                     "significant bit first (leave --bitorder out: uint8 files default to big)");
  }
  req.ctx.backend = parse_backend(opt.get_or("backend", "auto"), "--backend");
  req.ctx.border = parse_border(opt.get_or("border", "auto"), "--border");
  req.ctx.vendor_blas = !opt.flag("own-kernels");
  req.ctx.on_notice = [](std::string_view note) { std::cerr << "ringmm multiply: note: " << note << "\n"; };

  // Only packed files may hold uint32 words; elsewhere '<u4' stays an unsupported dtype.
  // float16 and int8 files are read widened (f32, i32); b1 products read bits, not numbers.
  const npy::ReadOptions operand_options{.uint32_words = req.b1, .narrow = !req.b1},
      c0_options{.uint32_words = req.packed_out, .narrow = !req.b1};
  npy::Matrix a = npy::read(req.a_path, operand_options);
  npy::Matrix b = npy::read(req.b_path, operand_options);
  std::optional<npy::Matrix> c0;
  if (req.c_path) c0 = npy::read(*req.c_path, c0_options);
  if (req.b1) return run_multiply_b1(req, a, b, c0);
  map_int8_sentinel(req.kind, a, req.a_path);
  map_int8_sentinel(req.kind, b, req.b_path);
  if (c0) map_int8_sentinel(req.kind, *c0, *req.c_path);

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
