// Narrow operands (ringmm/narrow.hpp) in device memory: widened into the accumulator type before
// the product and, for a narrow C, rounded back after it; i8 tropical operands into 16-bit lane
// pairs, and their product's lanes into the i32 C. Each is one pass over the matrix, a few hundred
// microseconds at 8192² against tens of milliseconds for the product.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cuda/host_staging.hpp"
#include "ringmm/detail/cuda_backend.hpp"
#include "ringmm/error.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::cuda_detail {

namespace {

__device__ float widen_bits(NarrowElement type, std::uint16_t bits) {
  if (type == NarrowElement::bf16) return __uint_as_float(std::uint32_t(bits) << 16);
  return __half2float(__ushort_as_half(bits));  // exact: every f16 value is an f32 value
}

// Run r (of `outer`) holds `inner` elements from + r·ld; the copy is dense, run r at to + r·inner.
// Threads walk the inner axis, so reads and writes are both contiguous.
template <class W>
__global__ void widen_kernel(NarrowElement type, const void* from, index_t outer, index_t inner, index_t ld, W* to,
                             std::int8_t sentinel, std::int32_t zero) {
  for (index_t r = blockIdx.y; r < outer; r += gridDim.y)
    for (index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x; i < inner; i += index_t(gridDim.x) * blockDim.x) {
      if constexpr (std::is_same_v<W, std::int32_t>) {
        const std::int8_t x = static_cast<const std::int8_t*>(from)[r * ld + i];
        to[r * inner + i] = x == sentinel ? zero : std::int32_t(x);
      } else {
        to[r * inner + i] = widen_bits(type, static_cast<const std::uint16_t*>(from)[r * ld + i]);
      }
    }
}

// The same with one 16-byte load a thread: eight bf16/f16 or sixteen i8 elements (a group), where
// every run starts 16-byte aligned and holds whole groups. Run r holds `groups` groups from
// from + r·ld_bytes; the copy's groups are dense.
template <class W>
__global__ void widen_groups_kernel(NarrowElement type, const void* from, index_t outer, index_t groups, index_t ld_bytes,
                                    W* to, std::int8_t sentinel, std::int32_t zero) {
  constexpr int per_group = std::is_same_v<W, std::int32_t> ? 16 : 8;
  using W4 = std::conditional_t<std::is_same_v<W, std::int32_t>, int4, float4>;
  for (index_t r = blockIdx.y; r < outer; r += gridDim.y)
    for (index_t g = index_t(blockIdx.x) * blockDim.x + threadIdx.x; g < groups; g += index_t(gridDim.x) * blockDim.x) {
      const uint4 bits = *reinterpret_cast<const uint4*>(static_cast<const char*>(from) + r * ld_bytes + g * 16);
      const std::uint32_t words[4] = {bits.x, bits.y, bits.z, bits.w};  // element 0 in the low bits
      W v[per_group];
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        if constexpr (per_group == 16) {
#pragma unroll
          for (int b = 0; b < 4; ++b) {
            const auto x = std::int8_t(words[w] >> (8 * b));
            v[4 * w + b] = x == sentinel ? zero : std::int32_t(x);
          }
        } else {
          v[2 * w] = widen_bits(type, std::uint16_t(words[w]));
          v[2 * w + 1] = widen_bits(type, std::uint16_t(words[w] >> 16));
        }
      }
      W4* out = reinterpret_cast<W4*>(to + (r * groups + g) * per_group);
#pragma unroll
      for (int q = 0; q < per_group / 4; ++q) out[q] = W4{v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]};
    }
}

// Rounding to nearest, ties to even, as narrow_types.hpp rounds on the host (NaN stays a NaN).
__global__ void round_kernel(NarrowElement type, const float* from, index_t outer, index_t inner, std::uint16_t* to,
                             index_t ld) {
  for (index_t r = blockIdx.y; r < outer; r += gridDim.y)
    for (index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x; i < inner; i += index_t(gridDim.x) * blockDim.x) {
      const float x = from[r * inner + i];
      to[r * ld + i] = type == NarrowElement::bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(x))
                                                   : __half_as_ushort(__float2half_rn(x));
    }
}

// The 16-bit lanes' pair of the i32 pair that `max_plus` names.
template <bool MaxPlusPair> using I32Pair = std::conditional_t<MaxPlusPair, MaxPlus<std::int32_t>, MinPlus<std::int32_t>>;
template <bool MaxPlusPair> using LanesPair = std::conditional_t<MaxPlusPair, MaxPlus<i16x2>, MinPlus<i16x2>>;

// Flat grid-stride walks: every thread of the grid has work however short the rows are (batches
// of 64-byte rows left three quarters of a row-per-block grid idle).
__device__ index_t flat_first() { return index_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ index_t flat_step() { return index_t(gridDim.x) * blockDim.x; }

// N words (or i32 values) stored with one vector store.
template <class T, int N> struct alignas(sizeof(T) * N) Group {
  T v[N];
};

template <bool MaxPlusPair> __device__ std::int16_t to_lane(std::int8_t x, std::int8_t sentinel) {
  return x == sentinel ? LanesPair<MaxPlusPair>::zero().lo : std::int16_t(x);
}

// Member b of the batch (`stride` elements apart in `from`) is written dense, rows × words apart, so
// output word g of the walk is to[g]: one word a thread, any layout.
template <bool MaxPlusPair>
__global__ void i8_lanes_kernel(const std::int8_t* from, index_t rows, index_t cols, index_t rs, index_t cs,
                                index_t batch, index_t stride, bool pairs, std::int8_t sentinel, i16x2* to) {
  const std::int16_t zero = LanesPair<MaxPlusPair>::zero().lo;
  const index_t words = pairs ? (cols + 1) / 2 : cols, total = batch * rows * words;
  for (index_t g = flat_first(); g < total; g += flat_step()) {
    const index_t row = g / words, w = g % words;
    const std::int8_t* line = from + row / rows * stride + row % rows * rs;
    i16x2 out;
    if (pairs) {
      out.lo = to_lane<MaxPlusPair>(line[2 * w * cs], sentinel);
      out.hi = 2 * w + 1 < cols ? to_lane<MaxPlusPair>(line[(2 * w + 1) * cs], sentinel) : zero;
    } else {
      out.lo = out.hi = to_lane<MaxPlusPair>(line[w * cs], sentinel);
    }
    to[g] = out;
  }
}

// The same for rows of whole 4-byte quads (cs = 1, cols % 4 = 0, every row 4-byte aligned), the
// layout of dense row-major operands: one 4-byte load a thread and one vector store of its four
// words (A) or two (B). Quad g of the walk lands at word 4g (A) or 2g (B).
template <bool MaxPlusPair>
__global__ void i8_lanes_quads_kernel(const std::int8_t* from, index_t rows, index_t cols, index_t rs, index_t batch,
                                      index_t stride, bool pairs, std::int8_t sentinel, i16x2* to) {
  const index_t quads = cols / 4, total = batch * rows * quads;
  for (index_t g = flat_first(); g < total; g += flat_step()) {
    const index_t row = g / quads, q = g % quads;
    const auto bits = *reinterpret_cast<const std::uint32_t*>(from + row / rows * stride + row % rows * rs + 4 * q);
    std::int16_t v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = to_lane<MaxPlusPair>(std::int8_t(bits >> (8 * e)), sentinel);
    if (pairs) {
      Group<i16x2, 2> out;
      out.v[0].lo = v[0], out.v[0].hi = v[1], out.v[1].lo = v[2], out.v[1].hi = v[3];
      reinterpret_cast<Group<i16x2, 2>*>(to)[g] = out;
    } else {
      Group<i16x2, 4> out;
#pragma unroll
      for (int e = 0; e < 4; ++e) out.v[e].lo = out.v[e].hi = v[e];
      reinterpret_cast<Group<i16x2, 4>*>(to)[g] = out;
    }
  }
}

// The same for matrices whose elements run down their columns (rs = 1, transposed or column-major
// operands), which the kernel above would read a byte a column apart: a tile of `lanes_tile`²
// elements is read down its columns into shared memory, then written along its rows.
constexpr int lanes_tile = 64;

template <bool MaxPlusPair>
__global__ void i8_lanes_tiled_kernel(const std::int8_t* from, index_t rows, index_t cols, index_t cs, index_t batch,
                                      index_t stride, bool pairs, std::int8_t sentinel, i16x2* to) {
  constexpr int T = lanes_tile;
  __shared__ std::int16_t tile[T][T + 1];  // tile[row][column], a column of padding against bank conflicts
  const std::int16_t zero = LanesPair<MaxPlusPair>::zero().lo;
  const index_t words = pairs ? (cols + 1) / 2 : cols, row_tiles = (rows + T - 1) / T;
  const int tile_words = pairs ? T / 2 : T;
  const index_t c0 = index_t(blockIdx.x) * T;
  for (index_t bt = blockIdx.y; bt < batch * row_tiles; bt += gridDim.y) {
    const index_t member = bt / row_tiles, r0 = bt % row_tiles * T;
    const std::int8_t* matrix = from + member * stride;
    for (int i = threadIdx.x; i < T * T; i += blockDim.x) {
      const int tr = i % T, tc = i / T;
      const index_t r = r0 + tr, c = c0 + tc;
      std::int16_t v = zero;  // past the matrix: the high lane of an odd last column pair stays 0̄
      if (r < rows && c < cols) v = to_lane<MaxPlusPair>(matrix[r + c * cs], sentinel);
      tile[tr][tc] = v;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < T * tile_words; i += blockDim.x) {
      const int tr = i / tile_words, tw = i % tile_words;
      const index_t r = r0 + tr, w = (pairs ? c0 / 2 : c0) + tw;
      if (r >= rows || w >= words) continue;
      i16x2 out;
      if (pairs) out.lo = tile[tr][2 * tw], out.hi = tile[tr][2 * tw + 1];
      else out.lo = out.hi = tile[tr][tw];
      to[(member * rows + r) * words + w] = out;
    }
    __syncthreads();
  }
}

// The product's members are dense (m × words apart), C's `c_stride` apart; one output a thread.
template <bool MaxPlusPair>
__global__ void lanes_to_i32_kernel(const i16x2* product, index_t m, index_t n, index_t batch, std::int32_t* c,
                                    index_t c_rs, index_t c_cs, index_t c_stride, std::int32_t alpha, std::int32_t beta) {
  using S = I32Pair<MaxPlusPair>;
  const std::int16_t zero = LanesPair<MaxPlusPair>::zero().lo;
  const index_t words = (n + 1) / 2, total = batch * m * n;
  for (index_t g = flat_first(); g < total; g += flat_step()) {
    const index_t row = g / n, j = g % n;
    const i16x2 word = product[row * words + j / 2];
    const std::int16_t v = j % 2 == 0 ? word.lo : word.hi;
    std::int32_t* out = c + row / m * c_stride + row % m * c_rs + j * c_cs;
    *out = semiring_traits<S>::epilogue(alpha, v == zero ? S::zero() : std::int32_t(v), beta, out);
  }
}

// The same for C of rows of whole quads (c_cs = 1, n % 4 = 0, every row 16-byte aligned): two words
// read and four outputs written a thread, quad g from words 2g and 2g + 1.
template <bool MaxPlusPair>
__global__ void lanes_to_i32_quads_kernel(const i16x2* product, index_t m, index_t n, index_t batch, std::int32_t* c,
                                          index_t c_rs, index_t c_stride, std::int32_t alpha, std::int32_t beta) {
  using S = I32Pair<MaxPlusPair>;
  const std::int16_t zero = LanesPair<MaxPlusPair>::zero().lo;
  const index_t quads = n / 4, total = batch * m * quads;
  for (index_t g = flat_first(); g < total; g += flat_step()) {
    const index_t row = g / quads, q = g % quads;
    const Group<i16x2, 2> words = reinterpret_cast<const Group<i16x2, 2>*>(product)[g];
    const std::int16_t v[4] = {words.v[0].lo, words.v[0].hi, words.v[1].lo, words.v[1].hi};
    std::int32_t* out = c + row / m * c_stride + row % m * c_rs + 4 * q;
    Group<std::int32_t, 4> values;
#pragma unroll
    for (int e = 0; e < 4; ++e)
      values.v[e] = semiring_traits<S>::epilogue(alpha, v[e] == zero ? S::zero() : std::int32_t(v[e]), beta, out + e);
    *reinterpret_cast<Group<std::int32_t, 4>*>(out) = values;
  }
}

constexpr int threads = 256;

// A grid over `outer` runs of `inner` elements: blocks across a run, up to 65535 runs at once.
dim3 runs_grid(index_t outer, index_t inner) {
  const index_t across = std::min<index_t>((inner + threads - 1) / threads, index_t(4) * multiprocessor_count());
  return dim3(unsigned(std::max<index_t>(across, 1)), unsigned(std::min<index_t>(outer, 65535)));
}

// A flat walk's grid over `items`: up to 32 blocks an SM, each thread then taking items a grid apart.
unsigned flat_grid(index_t items) {
  return unsigned(std::clamp<index_t>((items + threads - 1) / threads, 1, index_t(32) * multiprocessor_count()));
}

bool aligned(const void* p, std::uintptr_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

// Whether every row of every member (`rows` × `cols`, rows `rs` apart, members `stride` apart, all in
// elements) starts a whole number of quads after the first: the quads kernels' layouts.
bool rows_of_quads(index_t rows, index_t cols, index_t rs, index_t batch, index_t stride) {
  return cols % 4 == 0 && (rows == 1 || rs % 4 == 0) && (batch == 1 || stride % 4 == 0);
}

}  // namespace

void widen_runs(NarrowElement type, const void* from, index_t outer, index_t inner, index_t ld, void* to,
                std::int8_t sentinel, std::int32_t zero, void* stream) {
  if (outer <= 0 || inner <= 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  const index_t element_bytes = type == NarrowElement::i8 ? 1 : 2, per_group = 16 / element_bytes;
  if (aligned(from, 16) && aligned(to, 16) && inner % per_group == 0 && (ld * element_bytes) % 16 == 0) {
    const index_t groups = inner / per_group;
    const dim3 grid = runs_grid(outer, groups);
    if (type == NarrowElement::i8)
      widen_groups_kernel<std::int32_t><<<grid, threads, 0, s>>>(type, from, outer, groups, ld, static_cast<std::int32_t*>(to),
                                                                sentinel, zero);
    else
      widen_groups_kernel<float><<<grid, threads, 0, s>>>(type, from, outer, groups, ld * 2, static_cast<float*>(to),
                                                         sentinel, zero);
    check_launch("widen_groups_kernel");
    return;
  }
  const dim3 grid = runs_grid(outer, inner);
  if (type == NarrowElement::i8)
    widen_kernel<std::int32_t><<<grid, threads, 0, s>>>(type, from, outer, inner, ld, static_cast<std::int32_t*>(to),
                                                       sentinel, zero);
  else
    widen_kernel<float><<<grid, threads, 0, s>>>(type, from, outer, inner, ld, static_cast<float*>(to), sentinel, zero);
  check_launch("widen_kernel");
}

// The lane kernels take max-plus or min-plus as a template flag: f(std::true_type{}) or
// f(std::false_type{}), whose value names the instantiation to launch.
namespace {
template <class F> void with_semiring_flag(bool max_plus, F&& f) {
  if (max_plus) f(std::true_type{});
  else f(std::false_type{});
}
}  // namespace

void i8_to_lanes(bool max_plus, const std::int8_t* from, index_t rows, index_t cols, index_t rs, index_t cs,
                 index_t batch, index_t stride, bool pairs, std::int8_t sentinel, void* to, void* stream) {
  if (rows <= 0 || cols <= 0 || batch <= 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  auto* words = static_cast<i16x2*>(to);
  if (rs == 1 && cols > 1) {
    const index_t tiles = batch * ((rows + lanes_tile - 1) / lanes_tile);
    const dim3 grid(unsigned((cols + lanes_tile - 1) / lanes_tile), unsigned(std::min<index_t>(tiles, 65535)));
    with_semiring_flag(max_plus, [&](auto mp) {
      i8_lanes_tiled_kernel<mp()><<<grid, threads, 0, s>>>(from, rows, cols, cs, batch, stride, pairs, sentinel, words);
    });
    check_launch("i8_lanes_tiled_kernel");
    return;
  }
  const bool quads = cs == 1 && rows_of_quads(rows, cols, rs, batch, stride) && aligned(from, 4) && aligned(to, 16);
  if (quads) {
    const unsigned grid = flat_grid(batch * rows * (cols / 4));
    with_semiring_flag(max_plus, [&](auto mp) {
      i8_lanes_quads_kernel<mp()><<<grid, threads, 0, s>>>(from, rows, cols, rs, batch, stride, pairs, sentinel, words);
    });
    check_launch("i8_lanes_quads_kernel");
    return;
  }
  const unsigned grid = flat_grid(batch * rows * (pairs ? (cols + 1) / 2 : cols));
  with_semiring_flag(max_plus, [&](auto mp) {
    i8_lanes_kernel<mp()><<<grid, threads, 0, s>>>(from, rows, cols, rs, cs, batch, stride, pairs, sentinel, words);
  });
  check_launch("i8_lanes_kernel");
}

void lanes_to_i32(bool max_plus, const void* product, index_t m, index_t n, index_t batch, std::int32_t* c, index_t c_rs,
                  index_t c_cs, index_t c_stride, std::int32_t alpha, std::int32_t beta, void* stream) {
  if (m <= 0 || n <= 0 || batch <= 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  const auto* words = static_cast<const i16x2*>(product);
  const bool quads = c_cs == 1 && rows_of_quads(m, n, c_rs, batch, c_stride) && aligned(c, 16) && aligned(product, 8);
  if (quads) {
    const unsigned grid = flat_grid(batch * m * (n / 4));
    with_semiring_flag(max_plus, [&](auto mp) {
      lanes_to_i32_quads_kernel<mp()><<<grid, threads, 0, s>>>(words, m, n, batch, c, c_rs, c_stride, alpha, beta);
    });
    check_launch("lanes_to_i32_quads_kernel");
    return;
  }
  const unsigned grid = flat_grid(batch * m * n);
  with_semiring_flag(max_plus, [&](auto mp) {
    lanes_to_i32_kernel<mp()><<<grid, threads, 0, s>>>(words, m, n, batch, c, c_rs, c_cs, c_stride, alpha, beta);
  });
  check_launch("lanes_to_i32_kernel");
}

void copy_runs(const void* from, std::size_t from_pitch, void* to, std::size_t to_pitch, std::size_t run_bytes,
               index_t runs, void* stream) {
  if (runs <= 0 || run_bytes == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  const bool to_host = !is_device_pointer(to);
  const auto* host = static_cast<const char*>(to_host ? to : from);
  const std::size_t host_pitch = to_host ? to_pitch : from_pitch;
  // Pageable memory goes through the host pipeline's pinned slots, several times a plain copy's rate.
  if (!is_pinned_host(host, host + (std::size_t(runs) - 1) * host_pitch + run_bytes - 1)) {
    if (to_host) download_lines(to, to_pitch, from, from_pitch, run_bytes, std::size_t(runs), s);
    else upload_lines(to, to_pitch, from, from_pitch, run_bytes, std::size_t(runs), s);
    return;
  }
  cuda_check(cudaMemcpy2DAsync(to, to_pitch, from, from_pitch, run_bytes, std::size_t(runs), cudaMemcpyDefault, s),
             "narrow operand copy (cudaMemcpy2DAsync)");
  if (to_host) cuda_check(cudaStreamSynchronize(s), "narrow operand copy (cudaStreamSynchronize)");
}

void round_runs(NarrowElement type, const float* from, index_t outer, index_t inner, void* to, index_t ld, void* stream) {
  if (type == NarrowElement::i8)
    throw Error(Errc::unsupported, "C", "an i8 C is not written: i8 products accumulate into an i32 C");
  if (outer <= 0 || inner <= 0) return;
  round_kernel<<<runs_grid(outer, inner), threads, 0, static_cast<cudaStream_t>(stream)>>>(
      type, from, outer, inner, static_cast<std::uint16_t*>(to), ld);
  check_launch("round_kernel");
}

}  // namespace ringmm::cuda_detail
