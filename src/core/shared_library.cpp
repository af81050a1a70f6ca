#include "shared_library.hpp"

#include <dlfcn.h>

#include "ringmm/error.hpp"

namespace ringmm::detail {

SharedLibrary::SharedLibrary(std::initializer_list<std::string> candidates) {
  std::string reasons;
  for (const std::string& candidate : candidates) {
    // RTLD_LOCAL: the library's symbols reach ringmm only through resolve().
    handle_ = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_) {
      opened_ = candidate;
      return;
    }
    reasons += (reasons.empty() ? "" : "; ") + std::string(::dlerror());
  }
  throw Error(Errc::backend_unavailable, candidates.size() ? *candidates.begin() : "", "cannot be loaded: " + reasons);
}

void* SharedLibrary::address_of(const char* symbol) const {
  void* address = ::dlsym(handle_, symbol);
  if (!address)
    throw Error(Errc::backend_unavailable, opened_, std::string("no symbol ") + symbol + ": " + ::dlerror());
  return address;
}

}  // namespace ringmm::detail
