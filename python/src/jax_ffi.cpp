// ringmm's XLA FFI handlers: the custom calls through which ringmm.jax runs under jax.jit, vmap and
// grad (python/ringmm/jax.py declares them with jax.ffi.ffi_call). Built when jaxlib's headers were
// found at build time (python/CMakeLists.txt); each handler exists for XLA's CPU and CUDA platforms.
//
// A handler reads XLA's buffers (dense, row-major) as ArrayInfo, makes the same checks and plan as
// the Python entries (make_plan, Backward) and runs the same library calls, without the GIL. On CUDA
// it runs on XLA's stream and takes its workspace from XLA's scratch allocator (ScopedWorkspace), so
// that a product which needs no value check and no cuBLAS neither allocates nor synchronises: those
// targets are declared compatible with XLA's command buffers (CUDA graphs). The pairs whose inputs are checked
// (integers, max-times, log-plus), the backward products, APSP and the HMMs read a flag back from the
// device and are not. A refusal at run time is returned as an FFI error carrying ringmm's message.
// Also here: the checks ringmm.jax makes at trace time, on shapes and dtypes alone (jax_plan).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "arrays.hpp"
#include "backward_plan.hpp"
#include "bindings.hpp"
#include "entry.hpp"
#include "ringmm/apsp.hpp"
#include "ringmm/hmm.hpp"
#include "xla/ffi/api/ffi.h"
#if RINGMM_PY_HAVE_CUDA
#include "ringmm/cuda/check.hpp"
#endif

namespace ffi = xla::ffi;

namespace ringmm_py {

namespace {

// ---- XLA's buffers ------------------------------------------------------------------------------

std::optional<nb::dlpack::dtype> dlpack_dtype(ffi::DataType type) {
  switch (type) {
    case ffi::DataType::F32: return nb::dtype<float>();
    case ffi::DataType::F64: return nb::dtype<double>();
    case ffi::DataType::S32: return nb::dtype<std::int32_t>();
    case ffi::DataType::S64: return nb::dtype<std::int64_t>();
    case ffi::DataType::U8: return nb::dtype<std::uint8_t>();
    case ffi::DataType::PRED: return nb::dtype<bool>();
    default: return std::nullopt;
  }
}

// Where a handler's buffers live and the stream it runs on: the host for the CPU handlers, the
// buffers' GPU and XLA's stream for the CUDA ones.
struct Site {
  Place place;
  void* stream = nullptr;

  Context context() const {
    Context ctx;
    ctx.on_notice = [](std::string_view) {};
    ctx.backend = place.gpu ? Backend::cuda : Backend::cpu;
    ctx.cuda_stream = stream;
    return ctx;
  }
};

// A buffer as the entries' checks read an array: dense and row-major, as XLA lays out custom calls'
// operands and results by default.
ArrayInfo info_of(const char* name, const ffi::AnyBuffer& x, const Site& site) {
  const std::optional<nb::dlpack::dtype> dtype = dlpack_dtype(x.element_type());
  if (!dtype)
    throw std::invalid_argument(std::string(name) + " has an element type ringmm does not read (XLA type " +
                                std::to_string(int(x.element_type())) + ")");
  const auto dims = x.dimensions();
  Shape shape(dims.begin(), dims.end());
  return ArrayInfo(name, x.untyped_data(), *dtype, site.place, shape, contiguous_strides(shape));
}

std::size_t bytes_of(const ArrayInfo& x) {
  std::size_t count = std::size_t(x.dtype.bits) / 8;
  for (index_t d : x.shape) count *= std::size_t(d);
  return count;
}

ffi::ErrorCode code_of(Errc code) {
  switch (code) {
    case Errc::out_of_memory: return ffi::ErrorCode::kResourceExhausted;
    case Errc::device_error: return ffi::ErrorCode::kInternal;
    case Errc::backend_unavailable: return ffi::ErrorCode::kUnavailable;
    default: return ffi::ErrorCode::kInvalidArgument;
  }
}

// Runs `work`, turning ringmm's refusals (and the checks' TypeError and ValueError) into the FFI
// error that jax raises with the same message.
template <class Work> ffi::Error guarded(Work&& work) {
  try {
    work();
    return ffi::Error::Success();
  } catch (const Error& e) {
    return ffi::Error(code_of(e.code()), e.what());
  } catch (const std::exception& e) {
    return ffi::Error::InvalidArgument(e.what());
  }
}

// ---- copies on the buffers' side ----------------------------------------------------------------

void copy_bytes(const Site& site, void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0 || dst == src) return;
#if RINGMM_PY_HAVE_CUDA
  if (site.place.gpu) {
    cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(site.stream)),
               "copying on the device");
    return;
  }
#endif
  std::memcpy(dst, src, bytes);
}

// Every byte of x set to 0xff: the index -1 in every entry of an int32 or int64 array.
void fill_minus_one(const Site& site, const ArrayInfo& x) {
  const std::size_t bytes = bytes_of(x);
  if (bytes == 0) return;
#if RINGMM_PY_HAVE_CUDA
  if (site.place.gpu) {
    cuda_check(cudaMemsetAsync(x.data, 0xff, bytes, static_cast<cudaStream_t>(site.stream)), "filling k_star");
    return;
  }
#endif
  std::memset(x.data, 0xff, bytes);
}

// out = c broadcast over out's batch (c's matrices have out's shape; ringmm.jax broadcasts them).
void copy_broadcast(const Site& site, const ArrayInfo& c, const ArrayInfo& out, const Shape& batch, index_t members) {
  if (c.shape == out.shape) return copy_bytes(site, out.data, c.data, bytes_of(out));
  const std::size_t element = std::size_t(out.dtype.bits) / 8;
  const std::size_t matrix = std::size_t(out.rows() * out.cols());
  for (index_t i = 0; i < members; ++i)
    copy_bytes(site, static_cast<char*>(out.data) + std::size_t(i) * matrix * element,
               static_cast<const char*>(c.data) + std::size_t(member_offset(c, batch, i)) * element, matrix * element);
}

// ---- the handlers' work, for either platform ----------------------------------------------------

struct ProductAttributes {
  std::string_view semiring;
  bool trans_a, trans_b;
  bool has_alpha;
  double alpha;
  bool has_beta;
  double beta;
};

// c = alpha ⊗ (op(a) ⊗ op(b)) ⊕ beta ⊗ c0, with k_star where given. a, b and c0 broadcast over the
// batch as numpy.matmul's operands; batch dimensions that collapse into one stride are one batched
// product, others (a vmapped operand beside a partly broadcast one) one product per member.
void product(const Site& site, ffi::AnyBuffer a_buffer, ffi::AnyBuffer b_buffer, ffi::RemainingArgs rest,
             ffi::AnyBuffer out_buffer, const ffi::AnyBuffer* k_star_buffer, const ProductAttributes& at) {
  const SemiringKind kind = parse_semiring_name(std::string(at.semiring));
  const ArrayInfo a = info_of("a", a_buffer, site), b = info_of("b", b_buffer, site);
  const ArrayInfo out = info_of("out", out_buffer, site);
  std::optional<ArrayInfo> c;
  if (!rest.empty()) {
    const ffi::ErrorOr<ffi::AnyBuffer> c_buffer = rest.get<ffi::AnyBuffer>(0);
    if (!c_buffer.has_value()) throw std::invalid_argument("c: " + c_buffer.error().message());
    c.emplace(info_of("c", *c_buffer, site));
  }
  const Plan p = make_plan(a, b, c ? &*c : nullptr, &out, kind, at.trans_a, at.trans_b);
  const std::optional<double> alpha = at.has_alpha ? std::optional<double>(at.alpha) : std::nullopt;
  const std::optional<double> beta = at.has_beta ? std::optional<double>(at.beta) : std::nullopt;
  std::optional<ArrayInfo> k_star;
  Operand k_op;
  if (k_star_buffer) {
    k_star.emplace(info_of("k_star", *k_star_buffer, site));
    check_index_array(*k_star, p.shape, a, true);
    k_op = describe(*k_star, p.batch);
  }
  const bool k_int64 = k_star && k_star->dtype == nb::dtype<std::int64_t>();
  if (c) {
    copy_broadcast(site, *c, out, p.batch, p.members);
    if (k_star) fill_minus_one(site, *k_star);  // the library keeps -1 where beta ⊗ c wins
  }
  const Context ctx = site.context();
  if (p.a.in_place && p.b.in_place)
    return multiply(p, k_star ? &k_op : nullptr, k_int64, kind, at.trans_a, at.trans_b, alpha, beta, c.has_value(),
                    ctx, site.place);
  const std::size_t element = std::size_t(a.dtype.bits) / 8, index = k_int64 ? 8 : 4;
  const index_t matrix = out.rows() * out.cols();
  for (index_t i = 0; i < p.members; ++i) {
    Plan member = p;
    member.members = 1;
    for (auto [op, x] : {std::pair{&member.a, &a}, std::pair{&member.b, &b}}) {
      *op = describe_matrices(*x);
      op->data = static_cast<char*>(x->data) + std::size_t(member_offset(*x, p.batch, i)) * element;
    }
    member.out.data = static_cast<char*>(out.data) + std::size_t(i * matrix) * element;
    member.out.batch_stride = 0;
    Operand k_member = k_op;
    if (k_star) {
      k_member.data = static_cast<char*>(k_star->data) + std::size_t(i * matrix) * index;
      k_member.batch_stride = 0;
    }
    multiply(member, k_star ? &k_member : nullptr, k_int64, kind, at.trans_a, at.trans_b, alpha, beta, c.has_value(),
             ctx, site.place);
  }
}

// (grad_a, grad_b) of c = a ⊗ b given grad_c: over log-plus (forward is c) or a selecting semiring
// (forward is k_star), with autograd.cpp's checks and run.
void backward(const Site& site, ffi::AnyBuffer a_buffer, ffi::AnyBuffer b_buffer, ffi::AnyBuffer forward_buffer,
              ffi::AnyBuffer grad_c_buffer, ffi::AnyBuffer grad_a_buffer, ffi::AnyBuffer grad_b_buffer,
              std::string_view semiring) {
  const SemiringKind kind = parse_semiring_name(std::string(semiring));
  const bool log_plus = kind == SemiringKind::log_plus;
  const ArrayInfo a = info_of("a", a_buffer, site), b = info_of("b", b_buffer, site);
  const ArrayInfo forward = info_of(log_plus ? "c" : "k_star", forward_buffer, site);
  const ArrayInfo grad_c = info_of("grad_c", grad_c_buffer, site);
  Backward w(a, b, forward, grad_c, kind, !log_plus);
  if (!log_plus) require_selecting(kind, w.type, "argmax_backward");
  const ArrayInfo* inputs[4] = {&a, &b, &forward, &grad_c};
  w.set_arrays(inputs, info_of("grad_a", grad_a_buffer, site), info_of("grad_b", grad_b_buffer, site));
  run_backward(w, log_plus, kind, site.context());
}

// All-pairs shortest (longest) paths: dist starts as a copy of the weights.
void apsp(const Site& site, ffi::AnyBuffer weights_buffer, ffi::AnyBuffer dist_buffer, ffi::AnyBuffer next_buffer,
          bool longest, std::int64_t block) {
  const ArrayInfo w = info_of("weights", weights_buffer, site), dist = info_of("dist", dist_buffer, site);
  const ArrayInfo next = info_of("next", next_buffer, site);
  if (w.shape.size() != 2 || w.rows() != w.cols())
    value_error("weights has shape " + shape_text(w.shape) + ": an adjacency matrix is square");
  const index_t n = w.rows();
  copy_bytes(site, dist.data, w.data, bytes_of(w));
  visit_real(w, "apsp takes float32 or float64 weights (+inf for no edge)", [&](auto zero) {
    using T = decltype(zero);
    try {
      const DeviceGuard device(site.place);
      apsp_in_place<T>(site.context(), row_major(static_cast<T*>(dist.data), n, n),
                       row_major(static_cast<std::int32_t*>(next.data), n, n), ApspOptions{longest, index_t(block)});
    } catch (const Error& e) {
      throw with_subject(e, e.subject() == "dist" ? "weights" : e.subject());
    }
  });
}

// Viterbi (path and score) or forward (log-likelihood) over emit (T, B, S), step-major.
void hmm(const Site& site, bool viterbi, ffi::AnyBuffer init_buffer, ffi::AnyBuffer trans_buffer,
         ffi::AnyBuffer emit_buffer, ffi::AnyBuffer* path_buffer, ffi::AnyBuffer values_buffer) {
  const ArrayInfo init = info_of("init", init_buffer, site), trans = info_of("trans", trans_buffer, site);
  const ArrayInfo emit = info_of("scores", emit_buffer, site), values = info_of("score", values_buffer, site);
  if (emit.shape.size() != 3) value_error("scores has shape " + shape_text(emit.shape) + " where (T, B, S) is read");
  const index_t steps = emit.shape[0], batch = emit.shape[1], states = emit.shape[2];
  visit_real(init, "HMMs take float32 or float64 log-probabilities", [&](auto zero) {
    using T = decltype(zero);
    const HmmModel<T> model{batch, states, steps, static_cast<const T*>(init.data), static_cast<const T*>(trans.data),
                            static_cast<const T*>(emit.data)};
    const DeviceGuard device(site.place);
    const Context ctx = site.context();
    T* out = static_cast<T*>(values.data);
    if (!viterbi) return hmm_forward<T>(ctx, model, out);
    viterbi_fused_or_by_products<T>(ctx, model, static_cast<std::int32_t*>(path_buffer->untyped_data()), out);
  });
}

// ---- the platforms ------------------------------------------------------------------------------

Site host_site() { return Site{Place{}, nullptr}; }

#if RINGMM_PY_HAVE_CUDA
// XLA's scratch memory as the engine's workspace: live until the handler returns, by when the work
// that uses it is queued on XLA's stream, which orders its reuse.
class XlaScratch final : public cuda::WorkspaceSource {
 public:
  explicit XlaScratch(ffi::ScratchAllocator& scratch) : scratch_(scratch) {}
  // XLA aligns scratch to at most 16 bytes; the engine's buffers start on 256 (as cudaMalloc's do).
  void* allocate(std::size_t bytes) override {
    constexpr std::size_t alignment = 256, given = 16;
    const std::optional<void*> p = scratch_.Allocate(bytes + alignment - given, given);
    if (!p)
      throw Error(Errc::out_of_memory, "device memory",
                  "XLA's scratch allocator has no " + std::to_string(bytes) + " bytes");
    const auto address = reinterpret_cast<std::uintptr_t>(*p);
    return reinterpret_cast<void*>((address + alignment - 1) / alignment * alignment);
  }

 private:
  ffi::ScratchAllocator& scratch_;
};

// The GPU that holds `data` (XLA makes it current too; the library runs on the current device).
Site device_site(cudaStream_t stream, const void* data) {
  cudaPointerAttributes attributes{};
  cuda_check(cudaPointerGetAttributes(&attributes, data), "finding the buffers' device");
  return Site{Place{true, attributes.device}, stream};
}

// How many CUDA handler calls found XLA's stream capturing a CUDA graph (ringmm.jax.calls_in_graphs).
std::atomic<std::int64_t> captured_calls{0};

// Runs work(site) on XLA's stream with XLA's scratch as the workspace.
template <class Work>
ffi::Error on_device(cudaStream_t stream, ffi::ScratchAllocator& scratch, const void* data, Work&& work) {
  return guarded([&] {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cuda_check(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing");
    if (capture == cudaStreamCaptureStatusActive) captured_calls.fetch_add(1, std::memory_order_relaxed);
    XlaScratch source(scratch);
    const cuda::ScopedWorkspace workspace(source);
    work(device_site(stream, data));
  });
}
#endif

// ---- the handlers -------------------------------------------------------------------------------
// One implementation per platform and call, bound below.

ProductAttributes attributes(std::string_view semiring, bool trans_a, bool trans_b, bool has_alpha, double alpha,
                             bool has_beta, double beta) {
  return {semiring, trans_a, trans_b, has_alpha, alpha, has_beta, beta};
}

ffi::Error matmul_cpu(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::RemainingArgs c, ffi::Result<ffi::AnyBuffer> out,
                      std::string_view semiring, bool trans_a, bool trans_b, bool has_alpha, double alpha,
                      bool has_beta, double beta) {
  return guarded([&] {
    product(host_site(), a, b, c, *out, nullptr, attributes(semiring, trans_a, trans_b, has_alpha, alpha, has_beta, beta));
  });
}

ffi::Error matmul_argmax_cpu(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::RemainingArgs c,
                             ffi::Result<ffi::AnyBuffer> out, ffi::Result<ffi::AnyBuffer> k_star,
                             std::string_view semiring, bool trans_a, bool trans_b, bool has_alpha, double alpha,
                             bool has_beta, double beta) {
  return guarded([&] {
    const ffi::AnyBuffer k = *k_star;
    product(host_site(), a, b, c, *out, &k, attributes(semiring, trans_a, trans_b, has_alpha, alpha, has_beta, beta));
  });
}

ffi::Error backward_cpu(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::AnyBuffer forward, ffi::AnyBuffer grad_c,
                        ffi::Result<ffi::AnyBuffer> grad_a, ffi::Result<ffi::AnyBuffer> grad_b,
                        std::string_view semiring) {
  return guarded([&] { backward(host_site(), a, b, forward, grad_c, *grad_a, *grad_b, semiring); });
}

ffi::Error apsp_cpu(ffi::AnyBuffer weights, ffi::Result<ffi::AnyBuffer> dist, ffi::Result<ffi::AnyBuffer> next,
                    bool longest, std::int64_t block) {
  return guarded([&] { apsp(host_site(), weights, *dist, *next, longest, block); });
}

ffi::Error viterbi_cpu(ffi::AnyBuffer init, ffi::AnyBuffer trans, ffi::AnyBuffer emit,
                       ffi::Result<ffi::AnyBuffer> path, ffi::Result<ffi::AnyBuffer> score) {
  return guarded([&] {
    ffi::AnyBuffer p = *path;
    hmm(host_site(), true, init, trans, emit, &p, *score);
  });
}

ffi::Error forward_cpu(ffi::AnyBuffer init, ffi::AnyBuffer trans, ffi::AnyBuffer emit,
                       ffi::Result<ffi::AnyBuffer> loglik) {
  return guarded([&] { hmm(host_site(), false, init, trans, emit, nullptr, *loglik); });
}

#if RINGMM_PY_HAVE_CUDA
ffi::Error matmul_cuda(cudaStream_t stream, ffi::ScratchAllocator scratch, ffi::AnyBuffer a, ffi::AnyBuffer b,
                       ffi::RemainingArgs c, ffi::Result<ffi::AnyBuffer> out, std::string_view semiring, bool trans_a,
                       bool trans_b, bool has_alpha, double alpha, bool has_beta, double beta) {
  return on_device(stream, scratch, out->untyped_data(), [&](const Site& site) {
    product(site, a, b, c, *out, nullptr, attributes(semiring, trans_a, trans_b, has_alpha, alpha, has_beta, beta));
  });
}

ffi::Error matmul_argmax_cuda(cudaStream_t stream, ffi::ScratchAllocator scratch, ffi::AnyBuffer a, ffi::AnyBuffer b,
                              ffi::RemainingArgs c, ffi::Result<ffi::AnyBuffer> out, ffi::Result<ffi::AnyBuffer> k_star,
                              std::string_view semiring, bool trans_a, bool trans_b, bool has_alpha, double alpha,
                              bool has_beta, double beta) {
  return on_device(stream, scratch, out->untyped_data(), [&](const Site& site) {
    const ffi::AnyBuffer k = *k_star;
    product(site, a, b, c, *out, &k, attributes(semiring, trans_a, trans_b, has_alpha, alpha, has_beta, beta));
  });
}

ffi::Error backward_cuda(cudaStream_t stream, ffi::ScratchAllocator scratch, ffi::AnyBuffer a, ffi::AnyBuffer b,
                         ffi::AnyBuffer forward, ffi::AnyBuffer grad_c, ffi::Result<ffi::AnyBuffer> grad_a,
                         ffi::Result<ffi::AnyBuffer> grad_b, std::string_view semiring) {
  return on_device(stream, scratch, grad_a->untyped_data(), [&](const Site& site) {
    backward(site, a, b, forward, grad_c, *grad_a, *grad_b, semiring);
  });
}

ffi::Error apsp_cuda(cudaStream_t stream, ffi::ScratchAllocator scratch, ffi::AnyBuffer weights,
                     ffi::Result<ffi::AnyBuffer> dist, ffi::Result<ffi::AnyBuffer> next, bool longest,
                     std::int64_t block) {
  return on_device(stream, scratch, dist->untyped_data(),
                   [&](const Site& site) { apsp(site, weights, *dist, *next, longest, block); });
}

ffi::Error viterbi_cuda(cudaStream_t stream, ffi::ScratchAllocator scratch, ffi::AnyBuffer init, ffi::AnyBuffer trans,
                        ffi::AnyBuffer emit, ffi::Result<ffi::AnyBuffer> path, ffi::Result<ffi::AnyBuffer> score) {
  return on_device(stream, scratch, score->untyped_data(), [&](const Site& site) {
    ffi::AnyBuffer p = *path;
    hmm(site, true, init, trans, emit, &p, *score);
  });
}

ffi::Error forward_cuda(cudaStream_t stream, ffi::ScratchAllocator scratch, ffi::AnyBuffer init, ffi::AnyBuffer trans,
                        ffi::AnyBuffer emit, ffi::Result<ffi::AnyBuffer> loglik) {
  return on_device(stream, scratch, loglik->untyped_data(),
                   [&](const Site& site) { hmm(site, false, init, trans, emit, nullptr, *loglik); });
}
#endif

// ---- bindings -----------------------------------------------------------------------------------

// The bindings of each call, after what its platform binds first (`start`): nothing on the host;
// XLA's stream and scratch on CUDA. The product's attributes are named as ringmm.jax passes them.
template <int Results, class Start> auto product_binding(Start start) {
  auto operands = std::move(start).template Arg<ffi::AnyBuffer>().template Arg<ffi::AnyBuffer>().RemainingArgs();
  auto results = [&] {
    if constexpr (Results == 1) return std::move(operands).template Ret<ffi::AnyBuffer>();
    else return std::move(operands).template Ret<ffi::AnyBuffer>().template Ret<ffi::AnyBuffer>();
  }();
  return std::move(results)
      .template Attr<std::string_view>("semiring")
      .template Attr<bool>("trans_a")
      .template Attr<bool>("trans_b")
      .template Attr<bool>("has_alpha")
      .template Attr<double>("alpha")
      .template Attr<bool>("has_beta")
      .template Attr<double>("beta");
}

template <class Start> auto backward_binding(Start start) {  // a, b, c or k_star, grad_c → grad_a, grad_b
  return std::move(start)
      .template Arg<ffi::AnyBuffer>()
      .template Arg<ffi::AnyBuffer>()
      .template Arg<ffi::AnyBuffer>()
      .template Arg<ffi::AnyBuffer>()
      .template Ret<ffi::AnyBuffer>()
      .template Ret<ffi::AnyBuffer>()
      .template Attr<std::string_view>("semiring");
}

template <class Start> auto apsp_binding(Start start) {  // weights → dist, next
  return std::move(start)
      .template Arg<ffi::AnyBuffer>()
      .template Ret<ffi::AnyBuffer>()
      .template Ret<ffi::AnyBuffer>()
      .template Attr<bool>("longest")
      .template Attr<std::int64_t>("block");
}

// init, trans, emit → path and score (Viterbi) or the log-likelihood (forward).
template <int Results, class Start> auto hmm_binding(Start start) {
  auto operands = std::move(start).template Arg<ffi::AnyBuffer>().template Arg<ffi::AnyBuffer>().template Arg<ffi::AnyBuffer>();
  if constexpr (Results == 1) return std::move(operands).template Ret<ffi::AnyBuffer>();
  else return std::move(operands).template Ret<ffi::AnyBuffer>().template Ret<ffi::AnyBuffer>();
}

auto on_host() { return ffi::Ffi::Bind(); }
#if RINGMM_PY_HAVE_CUDA
auto on_cuda() { return ffi::Ffi::Bind().Ctx<ffi::PlatformStream<cudaStream_t>>().Ctx<ffi::ScratchAllocator>(); }
#endif

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_matmul_cpu, matmul_cpu, product_binding<1>(on_host()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_matmul_argmax_cpu, matmul_argmax_cpu, product_binding<2>(on_host()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_backward_cpu, backward_cpu, backward_binding(on_host()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_apsp_cpu, apsp_cpu, apsp_binding(on_host()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_viterbi_cpu, viterbi_cpu, hmm_binding<2>(on_host()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_forward_cpu, forward_cpu, hmm_binding<1>(on_host()));

#if RINGMM_PY_HAVE_CUDA
// The products that need no value check and no cuBLAS neither allocate (outside XLA's scratch) nor
// synchronise: XLA may capture them in a command buffer (the *_graph bindings). The others are
// bound without that trait.
XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_matmul_cuda_graph, matmul_cuda, product_binding<1>(on_cuda()),
                              {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_matmul_cuda, matmul_cuda, product_binding<1>(on_cuda()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_matmul_argmax_cuda_graph, matmul_argmax_cuda, product_binding<2>(on_cuda()),
                              {ffi::Traits::kCmdBufferCompatible});
XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_matmul_argmax_cuda, matmul_argmax_cuda, product_binding<2>(on_cuda()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_backward_cuda, backward_cuda, backward_binding(on_cuda()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_apsp_cuda, apsp_cuda, apsp_binding(on_cuda()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_viterbi_cuda, viterbi_cuda, hmm_binding<2>(on_cuda()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(ringmm_forward_cuda, forward_cuda, hmm_binding<1>(on_cuda()));
#endif

namespace {

nb::capsule capsule(XLA_FFI_Error* (*handler)(XLA_FFI_CallFrame*)) {
  return nb::capsule(reinterpret_cast<void*>(handler), "xla._CUSTOM_CALL_TARGET");
}

// {target: {platform: handler}}: what ringmm.jax registers with jax.ffi.register_ffi_target. The
// *_graph targets are the command-buffer-compatible bindings of the same products.
nb::dict handlers() {
  nb::dict targets;
  auto add = [&](const char* name, nb::object cpu, nb::object cuda) {
    nb::dict platforms;
    if (cpu.is_valid()) platforms["cpu"] = cpu;
    if (cuda.is_valid()) platforms["CUDA"] = cuda;
    targets[name] = platforms;
  };
#if RINGMM_PY_HAVE_CUDA
#define RINGMM_CUDA_HANDLER(symbol) capsule(symbol)
#else
#define RINGMM_CUDA_HANDLER(symbol) nb::object()
#endif
  add("ringmm_matmul", capsule(ringmm_matmul_cpu), RINGMM_CUDA_HANDLER(ringmm_matmul_cuda));
  add("ringmm_matmul_graph", capsule(ringmm_matmul_cpu), RINGMM_CUDA_HANDLER(ringmm_matmul_cuda_graph));
  add("ringmm_matmul_argmax", capsule(ringmm_matmul_argmax_cpu), RINGMM_CUDA_HANDLER(ringmm_matmul_argmax_cuda));
  add("ringmm_matmul_argmax_graph", capsule(ringmm_matmul_argmax_cpu),
      RINGMM_CUDA_HANDLER(ringmm_matmul_argmax_cuda_graph));
  add("ringmm_backward", capsule(ringmm_backward_cpu), RINGMM_CUDA_HANDLER(ringmm_backward_cuda));
  add("ringmm_apsp", capsule(ringmm_apsp_cpu), RINGMM_CUDA_HANDLER(ringmm_apsp_cuda));
  add("ringmm_hmm_viterbi", capsule(ringmm_viterbi_cpu), RINGMM_CUDA_HANDLER(ringmm_viterbi_cuda));
  add("ringmm_hmm_forward", capsule(ringmm_forward_cpu), RINGMM_CUDA_HANDLER(ringmm_forward_cuda));
#undef RINGMM_CUDA_HANDLER
  return targets;
}

// ---- trace-time checks --------------------------------------------------------------------------

// An array of `shape` and numpy dtype `dtype` as the checks read one (no data: JAX's tracers have none).
ArrayInfo traced(const char* name, const Shape& shape, const std::string& dtype) {
  const std::optional<nb::dlpack::dtype> d = dtype_of_name(dtype);
  if (!d) type_error(std::string(name) + " has dtype " + dtype + ", which ringmm does not multiply");
  return ArrayInfo(name, nullptr, *d, Place{}, shape, contiguous_strides(shape));
}

// ringmm.matmul's checks of a call with arrays of these shapes and dtypes, in its order and with its
// messages (plan_matmul); returns what ringmm.jax needs to declare the custom call.
nb::dict plan(const Shape& a_shape, const std::string& a_dtype, const Shape& b_shape, const std::string& b_dtype,
              const std::optional<Shape>& c_shape, const std::optional<std::string>& c_dtype, nb::handle semiring,
              nb::handle alpha_object, nb::handle beta_object, bool trans_a, bool trans_b, bool argmax) {
  check_semiring_type(semiring);
  const std::optional<double> alpha = number_of(alpha_object, "alpha"), beta = number_of(beta_object, "beta");
  (void)alpha;
  ArrayInfo a = traced("a", a_shape, a_dtype), b = traced("b", b_shape, b_dtype);
  std::optional<ArrayInfo> c, out;
  if (c_shape) c.emplace(traced("c", *c_shape, c_dtype.value_or(a_dtype)));
  const SemiringKind kind = semiring_of(semiring);
  const MatmulPlan m = plan_matmul(a, b, c, out, kind, trans_a, trans_b, argmax, beta.has_value());
  nb::dict d;
  d["shape"] = result_shape(m.plan.shape, m.row, m.col);
  d["matrix_shape"] = m.plan.shape;  // with the dimensions that vectors drop
  d["semiring"] = python_name(kind);
  d["k_star_dtype"] = m.k_int64 ? "int64" : "int32";
  // Capturable in a CUDA graph: no value check (which reads a flag back) and no cuBLAS (plus-times
  // f32/f64 by default, whose handle and workspace ringmm does not give it from XLA's scratch).
  d["in_graphs"] = visit_semiring(kind, m.plan.type, [kind](auto tag) {
    using S = typename decltype(tag)::type;
    return !detail::scans_inputs<S> && !(kind == SemiringKind::plus_times && std::is_floating_point_v<element_t<S>>);
  });
  d["selects"] = selects(kind, m.plan.type);
  return d;
}

std::int64_t calls_in_graphs() {
#if RINGMM_PY_HAVE_CUDA
  return captured_calls.load(std::memory_order_relaxed);
#else
  return 0;
#endif
}

}  // namespace

void bind_jax_ffi(nb::module_& m) {
  m.def("jax_handlers", &handlers, "ringmm.jax's XLA FFI handlers: {target: {platform: capsule}}");
  m.def("jax_calls_in_graphs", &calls_in_graphs,
        "How many of ringmm.jax's CUDA calls XLA made while capturing a CUDA graph (command buffer)");
  m.def("jax_plan", &plan, nb::arg("a_shape"), nb::arg("a_dtype"), nb::arg("b_shape"), nb::arg("b_dtype"),
        nb::arg("c_shape").none(), nb::arg("c_dtype").none(), nb::arg("semiring").none(), nb::arg("alpha").none(),
        nb::arg("beta").none(), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("argmax"),
        "ringmm.matmul's checks on shapes and dtypes (for ringmm.jax at trace time)");
}

}  // namespace ringmm_py
