// ringmm._core's applications of the product: all-pairs shortest paths with their routes, and HMM
// decoding (Viterbi, forward). Each is one entry (apsp, route, hmm) that reads the caller's arrays
// (entry.hpp), checks them, allocates its outputs and copies what the library cannot read as it is,
// in the caller's framework, runs the library with the GIL released, and names the Python arguments
// in errors.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "entry.hpp"
#include "ringmm/apsp.hpp"
#include "ringmm/hmm.hpp"
#if RINGMM_PY_HAVE_CUDA
#include "device_kernels.hpp"
#endif

namespace ringmm_py {

namespace {

using Array = nb::ndarray<nb::ro>;
using OptionalArray = std::optional<Array>;

// ---- all-pairs shortest paths ------------------------------------------------------------------

const std::string apsp_types = "apsp takes float32 or float64 weights (+inf for no edge)";

// The distances (a copy of the weights, which the solver overwrites) and, with return_next, the
// successor matrix, in the weights' framework.
nb::object apsp(nb::handle weights_object, nb::handle longest, nb::handle block_object, nb::handle return_next,
                nb::handle backend_object) {
  check_backend_type(backend_object);
  const index_t block = block_object.is_none() ? 0 : integer_of(block_object, "block");
  Call call({{"weights", weights_object}});
  const ArrayInfo w = call.info(0);
  if (w.shape.size() != 2)
    value_error("weights has " + std::to_string(w.shape.size()) + " dimensions: an adjacency matrix is n x n");
  if (w.rows() != w.cols()) value_error("weights has shape " + shape_text(w.shape) + ": an adjacency matrix is square");
  visit_real(w, apsp_types, [](auto) {});
  if (block < 0) value_error("block must be a positive number of vertices, got " + std::to_string(block));
  const Context ctx = call_context(w.place, backend_of(backend_object), call.stream(w.place));
  const index_t n = w.rows();
  std::optional<ArrayInfo> dist, next;
  const nb::object dist_object = call.empty({n, n}, w.dtype, w.place, "dist", dist);
  const nb::object next_object = call.empty({n, n}, nb::dtype<std::int32_t>(), w.place, "next", next);
  call.assign(dist_object, call[0].object);
  try {
    const DeviceGuard device(w.place);
    visit_real(w, apsp_types, [&](auto zero) {
      using T = decltype(zero);
      const nb::gil_scoped_release release;
      apsp_in_place<T>(ctx, row_major(static_cast<T*>(dist->data), n, n),
                       row_major(static_cast<std::int32_t*>(next->data), n, n),
                       ApspOptions{flag_of(longest), block});
    });
  } catch (const Error& e) {
    throw with_subject(e, e.subject() == "dist" ? "weights" : e.subject());
  }
  if (!flag_of(return_next)) return call.result(dist_object);
  return nb::make_tuple(call.result(dist_object), call.result(next_object));
}

// The vertices of a shortest from → to path read from a successor matrix on the host or a GPU.
nb::list route(nb::handle next_object, nb::handle i, nb::handle j) {
  Call call({{"next", next_object}});
  const index_t from = integer_of(i, "i"), to = integer_of(j, "j");
  const ArrayInfo next = call.info(0);
  if (next.shape.size() != 2 || next.rows() != next.cols())
    value_error("next has shape " + shape_text(next.shape) + ": a successor matrix is n x n");
  if (next.dtype != nb::dtype<std::int32_t>())
    type_error("next has dtype " + dtype_name(next.dtype) + ": a successor matrix is int32, as ringmm.apsp returns it");
  const index_t n = next.rows();
  for (const auto& [v, name] : {std::pair{from, "i"}, std::pair{to, "j"}})
    if (v < 0 || v >= n)
      value_error(std::string(name) + ": vertex " + std::to_string(v) + " is out of range " +
                  (n == 0 ? "(the graph has no vertices)" : "0.." + std::to_string(n - 1)));
  // ringmm::route reads next(v, to) only: column `to`, which comes from a GPU in one copy.
  std::vector<std::int32_t> column(static_cast<std::size_t>(n));
  const index_t rows_apart = next.strides[0];
  const std::int32_t* first = static_cast<const std::int32_t*>(next.data) + to * next.strides[1];
  if (next.place.gpu && rows_apart < 1 && n > 1) value_error("next has a row stride below 1: pass a contiguous copy");
  const std::uintptr_t stream = call.stream(next.place);
  std::vector<index_t> path;
  try {
    const nb::gil_scoped_release release;
    if (next.place.gpu) {
#if RINGMM_PY_HAVE_CUDA
      const DeviceGuard device(next.place);
      const auto s = reinterpret_cast<cudaStream_t>(stream);
      cuda_check(cudaMemcpy2DAsync(column.data(), sizeof(std::int32_t), first,
                                   std::size_t(std::max<index_t>(rows_apart, 1)) * sizeof(std::int32_t),
                                   sizeof(std::int32_t), std::size_t(n), cudaMemcpyDeviceToHost, s),
                 "reading next");
      cuda_check(cudaStreamSynchronize(s), "reading next");
#endif
    } else {
      for (index_t v = 0; v < n; ++v) column[std::size_t(v)] = first[v * rows_apart];
    }
    // A view whose every column is that column (column-major with leading dimension 0).
    path = ringmm::route(MatrixView<const std::int32_t>{column.data(), n, n, 0, Layout::col_major}, from, to);
  } catch (const Error& e) {
    throw with_subject(e, e.subject() == "from" ? "i" : e.subject() == "to" ? "j" : e.subject());
  }
  nb::list vertices;
  for (const index_t v : path) vertices.append(v);
  return vertices;
}

// ---- hidden Markov models ----------------------------------------------------------------------

const std::string hmm_types = "HMMs take float32 or float64 log-probabilities";

// The model's sizes, from the arrays as the caller passed them: init (S,), trans (S, S), and either
// the emission table (S, V) with observations (T,) or (B, T), or the scores (T, S) or (B, T, S).
struct HmmShape {
  bool single = false;  // one sequence: the batch dimension is absent
  index_t batch = 1, steps = 0, states = 0;
};

HmmShape hmm_shape(const ArrayInfo& init, const ArrayInfo& trans, const ArrayInfo* emission,
                   const ArrayInfo* observations, const ArrayInfo* scores) {
  HmmShape h;
  if (init.shape.size() != 1 || init.shape[0] == 0)
    value_error("init has shape " + shape_text(init.shape) + ": the initial log-probabilities are a vector of S >= 1 states");
  visit_real(init, hmm_types, [](auto) {});
  h.states = init.shape[0];
  const std::string states = std::to_string(h.states);
  check_same_dtype(trans, init);
  check_same_place(trans, init);
  if (trans.shape != Shape{h.states, h.states})
    value_error("trans has shape " + shape_text(trans.shape) + " but init has " + states +
                " states: the transition log-probabilities are S x S");
  if (scores && (emission || observations)) value_error("pass scores, or emission with observations, not both");
  if (!scores && !(emission && observations))
    value_error(emission       ? "emission needs observations (the symbols seen, int32 or int64)"
                : observations ? "observations need emission (the S x V table of log-probabilities)"
                               : "pass emission and observations, or scores");
  // The sequences: their number (absent for one) and their length, from scores or observations.
  const ArrayInfo& sequences = scores ? *scores : *observations;
  const std::size_t ndim = sequences.shape.size(), sequence_dims = scores ? 2 : 1;
  check_same_place(sequences, init);
  if (scores) {
    check_same_dtype(*scores, init);
    if ((ndim != 2 && ndim != 3) || scores->shape.back() != h.states)
      value_error("scores has shape " + shape_text(scores->shape) + ": log-scores are (T, S) for one sequence or " +
                  "(B, T, S) for a batch, with S = " + states + " states as init has");
  } else {
    check_same_dtype(*emission, init);
    check_same_place(*emission, init);
    if (emission->shape.size() != 2 || emission->rows() != h.states || emission->cols() == 0)
      value_error("emission has shape " + shape_text(emission->shape) + " but init has " + states +
                  " states: the emission table is S x V, one column per observation symbol");
    if (observations->dtype != nb::dtype<std::int32_t>() && observations->dtype != nb::dtype<std::int64_t>())
      type_error("observations has dtype " + dtype_name(observations->dtype) +
                 ": observations are int32 or int64 symbol indexes");
    if (ndim != 1 && ndim != 2)
      value_error("observations has shape " + shape_text(observations->shape) +
                  ": one sequence is (T,) and a batch (B, T)");
  }
  h.single = ndim == sequence_dims;
  h.steps = sequences.shape[ndim - sequence_dims];
  h.batch = h.single ? 1 : sequences.shape[0];
  if (h.steps == 0)
    value_error(std::string(sequences.name) + " has shape " + shape_text(sequences.shape) +
                ": a sequence needs at least one step");
  return h;
}

// What the emission scores of the step-major T×B×S array come from, and how errors name them.
struct EmissionSource {
  const HmmShape& h;
  const ArrayInfo* scores;  // or:
  const ArrayInfo* table;
  const ArrayInfo* observations;

  // Offsets into scores, or into observations, of sequence b (0 for one sequence).
  index_t sequence_offset(const ArrayInfo& x) const { return h.single ? 0 : x.strides[0]; }
  std::string where(index_t b, index_t t) const {
    return h.single ? std::to_string(t) : std::to_string(b) + ", " + std::to_string(t);
  }
  [[noreturn]] void bad_symbol(index_t b, index_t t, std::int64_t symbol) const {
    value_error("observations[" + where(b, t) + "] = " + std::to_string(symbol) + " is outside 0.." +
                std::to_string(table->cols() - 1) + " (emission has " + std::to_string(table->cols()) + " columns)");
  }
  [[noreturn]] void bad_value(index_t b, index_t t, index_t s, std::int64_t symbol, double value) const {
    const std::string what = std::isnan(value) ? "nan" : "+inf";
    if (scores)
      value_error("scores[" + where(b, t) + ", " + std::to_string(s) + "] is " + what +
                  "; log-scores must be finite or -inf");
    value_error("emission[" + std::to_string(s) + ", " + std::to_string(symbol) + "] is " + what + " (read for observations[" +
                where(b, t) + "]); log-probabilities must be finite or -inf");
  }
};

std::int64_t symbol_at(const ArrayInfo& observations, index_t offset) {
  if (observations.dtype == nb::dtype<std::int64_t>()) return static_cast<const std::int64_t*>(observations.data)[offset];
  return static_cast<const std::int32_t*>(observations.data)[offset];
}

template <class T> void fill_emissions_on_host(const EmissionSource& src, T* emit) {
  const HmmShape& h = src.h;
  for (index_t t = 0; t < h.steps; ++t)
    for (index_t b = 0; b < h.batch; ++b) {
      T* row = emit + (t * h.batch + b) * h.states;
      std::int64_t symbol = -1;
      const T* values;  // the S scores of (b, t), `apart` elements apart
      index_t apart;
      if (src.scores) {
        const ArrayInfo& x = *src.scores;
        values = static_cast<const T*>(x.data) + b * src.sequence_offset(x) + t * x.strides[x.shape.size() - 2];
        apart = x.strides.back();
      } else {
        const ArrayInfo& obs = *src.observations;
        symbol = symbol_at(obs, b * src.sequence_offset(obs) + t * obs.strides.back());
        if (symbol < 0 || symbol >= src.table->cols()) src.bad_symbol(b, t, symbol);
        values = static_cast<const T*>(src.table->data) + symbol * src.table->strides[1];
        apart = src.table->strides[0];
      }
      for (index_t s = 0; s < h.states; ++s) {
        const T value = values[s * apart];
        if (!(value < std::numeric_limits<T>::infinity())) src.bad_value(b, t, s, symbol, double(value));
        row[s] = value;
      }
    }
}

#if RINGMM_PY_HAVE_CUDA
template <class T> T read_device(const void* p, index_t offset) {
  T value{};
  cuda_check(cudaMemcpy(&value, static_cast<const T*>(p) + offset, sizeof(T), cudaMemcpyDeviceToHost), "reading an element");
  return value;
}

// The device version: one kernel, then one synchronisation to learn whether an element was refused;
// only then are the offending values read back, to name them.
template <class T> void fill_emissions_on_device(const EmissionSource& src, T* emit, cudaStream_t stream) {
  const HmmShape& h = src.h;
  device::EmissionSource d;
  if (src.scores) {
    const ArrayInfo& x = *src.scores;
    d.scores = x.data;
    d.score_stride[0] = src.sequence_offset(x);
    d.score_stride[1] = x.strides[x.shape.size() - 2];
    d.score_stride[2] = x.strides.back();
  } else {
    d.table = src.table->data;
    d.table_stride[0] = src.table->strides[0];
    d.table_stride[1] = src.table->strides[1];
    d.symbols = src.table->cols();
    d.observations = src.observations->data;
    d.observation_bytes = src.observations->dtype.bits / 8;
    d.observation_stride[0] = src.sequence_offset(*src.observations);
    d.observation_stride[1] = src.observations->strides.back();
  }
  unsigned long long* first_bad = nullptr;
  cuda_check(cudaMallocAsync(&first_bad, sizeof *first_bad, stream), "allocating the emission check");
  unsigned long long found = 0;
  cudaError_t status = cudaMemsetAsync(first_bad, 0xff, sizeof *first_bad, stream);
  if (status == cudaSuccess)
    status = device::fill_emissions(emit, sizeof(T) == 8, h.batch, h.steps, h.states, d, first_bad, stream);
  if (status == cudaSuccess) status = cudaMemcpyAsync(&found, first_bad, sizeof found, cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  cudaFreeAsync(first_bad, stream);
  cuda_check(status, "gathering the emission scores");
  if (found == ~0ull) return;
  const auto e = index_t(found);
  const index_t s = e % h.states, b = (e / h.states) % h.batch, t = e / (h.states * h.batch);
  if (src.scores) {
    const ArrayInfo& x = *src.scores;
    src.bad_value(b, t, s, -1,
                  double(read_device<T>(x.data, b * d.score_stride[0] + t * d.score_stride[1] + s * d.score_stride[2])));
  }
  const index_t at = b * d.observation_stride[0] + t * d.observation_stride[1];
  const std::int64_t symbol = d.observation_bytes == 8 ? read_device<std::int64_t>(d.observations, at)
                                                       : read_device<std::int32_t>(d.observations, at);
  if (symbol < 0 || symbol >= d.symbols) src.bad_symbol(b, t, symbol);
  src.bad_value(b, t, s, symbol, double(read_device<T>(d.table, s * d.table_stride[0] + symbol * d.table_stride[1])));
}
#endif

const ArrayInfo* pointer(const std::optional<ArrayInfo>& x) { return x ? &*x : nullptr; }

// Viterbi (path and score) or forward (the log-likelihood). The library reads init and trans
// contiguous (copies where the caller's are not), the emission scores gathered into the step-major
// emit (T, B, S), and writes path (B, T) and values (B,); one sequence gets path[0] and values[0].
nb::object hmm(nb::handle viterbi_object, nb::handle init_object, nb::handle trans_object, nb::handle emission_object,
               nb::handle observations_object, nb::handle scores_object, nb::handle backend_object) {
  check_backend_type(backend_object);
  const bool viterbi = flag_of(viterbi_object);
  enum { INIT, TRANS, EMISSION, OBSERVATIONS, SCORES };
  Call call({{"init", init_object},
             {"trans", trans_object},
             {"emission", emission_object, false},
             {"observations", observations_object, false},
             {"scores", scores_object, false}});
  std::optional<ArrayInfo> init = call.info(INIT), trans = call.info(TRANS), emission, observations, scores;
  if (call[EMISSION].present()) emission = call.info(EMISSION);
  if (call[OBSERVATIONS].present()) observations = call.info(OBSERVATIONS);
  if (call[SCORES].present()) scores = call.info(SCORES);
  const HmmShape h = hmm_shape(*init, *trans, pointer(emission), pointer(observations), pointer(scores));
  const Context ctx = call_context(init->place, backend_of(backend_object), call.stream(init->place));
  const std::uintptr_t stream = reinterpret_cast<std::uintptr_t>(ctx.cuda_stream);
  if (!init->place.gpu && ctx.backend == Backend::cuda)
    value_error("backend 'cuda' runs HMMs on arrays in GPU memory: pass GPU arrays (torch, cupy), or use backend 'cpu'");
  const Place place = init->place;
  for (auto& [i, x] : {std::pair{INIT, &init}, std::pair{TRANS, &trans}})
    if (!c_contiguous(**x)) call.contiguous_copy(i, *x);
  std::optional<ArrayInfo> emit, path, values;
  const nb::object emit_object = call.empty({h.steps, h.batch, h.states}, init->dtype, place, "emit", emit);
  nb::object path_object =
      viterbi ? call.empty({h.batch, h.steps}, nb::dtype<std::int32_t>(), place, "path", path) : nb::object();
  nb::object values_object = call.empty({h.batch}, init->dtype, place, "values", values);
  const EmissionSource source{h, pointer(scores), pointer(emission), pointer(observations)};
  try {
    const DeviceGuard device(place);
    visit_real(*init, hmm_types, [&](auto zero) {
      using T = decltype(zero);
      const nb::gil_scoped_release release;
      if (place.gpu) {
#if RINGMM_PY_HAVE_CUDA
        fill_emissions_on_device(source, static_cast<T*>(emit->data), reinterpret_cast<cudaStream_t>(stream));
#else
        (void)stream;
#endif
      } else {
        fill_emissions_on_host(source, static_cast<T*>(emit->data));
      }
      const HmmModel<T> model{h.batch, h.states, h.steps, static_cast<const T*>(init->data),
                              static_cast<const T*>(trans->data), static_cast<const T*>(emit->data)};
      T* out = static_cast<T*>(values->data);
      if (!viterbi) return hmm_forward<T>(ctx, model, out);
      viterbi_fused_or_by_products<T>(ctx, model, static_cast<std::int32_t*>(path->data), out);
    });
  } catch (const Error& e) {
    throw with_subject(e, e.subject() == "emit" ? (scores ? "scores" : "emission") : e.subject());
  }
  if (h.single) {
    const nb::object zero = nb::int_(0);
    values_object = nb::steal(PyObject_GetItem(values_object.ptr(), zero.ptr()));
    if (!values_object.is_valid()) throw nb::python_error();
    if (viterbi) {
      path_object = nb::steal(PyObject_GetItem(path_object.ptr(), zero.ptr()));
      if (!path_object.is_valid()) throw nb::python_error();
    }
  }
  if (!viterbi) return call.result(values_object);
  return nb::make_tuple(call.result(path_object), call.result(values_object));
}

}  // namespace

void bind_applications(nb::module_& m) {
  m.def("apsp", &apsp, nb::arg("weights").none(), nb::arg("longest").none(), nb::arg("block").none(),
        nb::arg("return_next").none(), nb::arg("backend").none(), "ringmm.apsp's one entry");
  m.def("route", &route, nb::arg("next").none(), nb::arg("i").none(), nb::arg("j").none(), "ringmm.route's one entry");
  m.def("hmm", &hmm, nb::arg("viterbi").none(), nb::arg("init").none(), nb::arg("trans").none(),
        nb::arg("emission").none(), nb::arg("observations").none(), nb::arg("scores").none(), nb::arg("backend").none(),
        "ringmm.hmm_viterbi's and ringmm.hmm_forward's one entry");
}

}  // namespace ringmm_py
