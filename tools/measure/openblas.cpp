// time_openblas (cpu_measure.hpp): the CPU baseline of `ringmm bench`.
#include <string>
#include <type_traits>
#include <vector>

#if RINGMM_MEASURE_HAS_BLAS
#include <cblas.h>
#endif

#include "measure/cpu_measure.hpp"
#include "measure/random_data.hpp"
#include "measure/timer.hpp"
#include "ringmm/error.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::measure {

namespace {

#if RINGMM_MEASURE_HAS_BLAS
template <class T> double time_typed(Product product, index_t m, index_t n, index_t k, index_t batch, int reps) {
  using S = PlusTimes<T>;
  const index_t members = product == Product::batched ? batch : 1;
  // syrk: A is k×n (m = n) and there is no B.
  const std::vector<T> a = random_vector<S>(std::size_t(members * m * k), 1, k);
  const std::vector<T> b = product == Product::syrk ? std::vector<T>() : random_vector<S>(std::size_t(members * k * n), 2, k);
  std::vector<T> c(std::size_t(members * m * n));
  return median_seconds(reps, [&] {
    for (index_t i = 0; i < members; ++i) {
      const T* am = a.data() + i * m * k;
      T* cm = c.data() + i * m * n;
      if (product == Product::syrk) {
        if constexpr (std::is_same_v<T, float>)
          cblas_ssyrk(CblasRowMajor, CblasLower, CblasTrans, int(n), int(k), 1.0f, am, int(n), 0.0f, cm, int(n));
        else
          cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, int(n), int(k), 1.0, am, int(n), 0.0, cm, int(n));
      } else {
        const T* bm = b.data() + i * k * n;
        if constexpr (std::is_same_v<T, float>)
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0f, am, int(k), bm, int(n),
                      0.0f, cm, int(n));
        else
          cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0, am, int(k), bm, int(n),
                      0.0, cm, int(n));
      }
    }
  });
}
#endif

}  // namespace

double time_openblas(DType precision, Product product, index_t m, index_t n, index_t k, index_t batch, int reps,
                     int threads) {
  if (precision != DType::f32 && precision != DType::f64)
    throw Error(Errc::unsupported, "type", "the OpenBLAS baseline is plus-times f32 or f64, not " +
                                               std::string(to_string(precision)));
#if RINGMM_MEASURE_HAS_BLAS
  const int saved = openblas_get_num_threads();
  if (threads > 0) openblas_set_num_threads(threads);
  const double seconds = precision == DType::f64 ? time_typed<double>(product, m, n, k, batch, reps)
                                                 : time_typed<float>(product, m, n, k, batch, reps);
  openblas_set_num_threads(saved);
  return seconds;
#else
  (void)product, (void)m, (void)n, (void)k, (void)batch, (void)reps, (void)threads;
  throw Error(Errc::backend_unavailable, "openblas", "this build of ringmm has no OpenBLAS");
#endif
}

}  // namespace ringmm::measure
