// A shared library opened when a feature first needs it rather than by the dynamic linker at
// start-up: cuBLAS alone costs every process ~90 ms and ~200 MB (lab/reports/startup.py measures it).
#pragma once

#include <initializer_list>
#include <string>

namespace ringmm::detail {

class SharedLibrary {
 public:
  // Opens the first of `candidates` (sonames or paths) that loads. Throws
  // Error(backend_unavailable) naming them all with the loader's reasons when none does.
  SharedLibrary(std::initializer_list<std::string> candidates);

  // Sets `function` to the library's exported `symbol`; throws Error when it has none.
  template <class Function> void resolve(Function& function, const char* symbol) const {
    function = reinterpret_cast<Function>(address_of(symbol));
  }

 private:
  void* address_of(const char* symbol) const;

  void* handle_ = nullptr;  // never closed: the library serves the process until it exits
  std::string opened_;      // the candidate that loaded, for error messages
};

}  // namespace ringmm::detail
