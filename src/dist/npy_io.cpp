// .npy input and output through one rank (the file is read and written by root only).
#include <string>
#include <vector>

#include "ringmm/dist.hpp"
#include "ringmm/npy.hpp"

namespace ringmm::dist {

npy::Matrix read_npy_on_root(const Grid& grid, const std::string& path, int root) {
  npy::Matrix m;
  std::optional<Error> problem;
  if (grid.rank() == root) {
    try {
      m = npy::read(path);
    } catch (const Error& e) {
      problem = e;
    }
  }
  throw_if_any(grid.comm(), problem);
  std::int64_t header[4] = {std::int64_t(m.dtype), m.rows, m.cols, m.fortran_order ? 1 : 0};
  MPI_Bcast(header, 4, MPI_INT64_T, root, grid.comm());
  m.dtype = DType(header[0]);
  m.rows = header[1];
  m.cols = header[2];
  m.fortran_order = header[3] != 0;
  return m;
}

template <class T> void write_npy(const Grid& grid, const DistMatrix<T>& m, const std::string& path, int root) {
  std::vector<T> whole;
  if (grid.rank() == root) whole.resize(std::size_t(m.rows() * m.cols()));
  gather(grid, m, MatrixView<T>{whole.data(), m.rows(), m.cols(), std::max<index_t>(1, m.cols()), Layout::row_major},
         root);
  std::optional<Error> problem;
  if (grid.rank() == root) {
    try {
      npy::write(path, dtype_of<T>::value, m.rows(), m.cols(), whole.data());
    } catch (const Error& e) {
      problem = e;
    }
  }
  throw_if_any(grid.comm(), problem);
}

template void write_npy<float>(const Grid&, const DistMatrix<float>&, const std::string&, int);
template void write_npy<double>(const Grid&, const DistMatrix<double>&, const std::string&, int);
template void write_npy<std::int32_t>(const Grid&, const DistMatrix<std::int32_t>&, const std::string&, int);
template void write_npy<i16x2>(const Grid&, const DistMatrix<i16x2>&, const std::string&, int);
template void write_npy<std::uint8_t>(const Grid&, const DistMatrix<std::uint8_t>&, const std::string&, int);

}  // namespace ringmm::dist
