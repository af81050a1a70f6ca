# Fails when the install holds measurement code: headers come from include/ringmm only and the one
# library is libringmm (ringmm_measure and its headers stay in the build tree).
file(GLOB_RECURSE installed RELATIVE ${PREFIX} ${PREFIX}/include/* ${PREFIX}/lib/*)
foreach(path IN LISTS installed)
  if(path MATCHES "^include/" AND NOT path MATCHES "^include/ringmm/")
    message(FATAL_ERROR "installed a header outside include/ringmm: ${path}")
  endif()
  if(path MATCHES "measure|cuda_tools" OR (path MATCHES "\\.(a|so)$" AND NOT path MATCHES "libringmm\\.(a|so)$"))
    message(FATAL_ERROR "installed measurement code: ${path}")
  endif()
endforeach()
