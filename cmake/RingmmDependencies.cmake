# Optional dependencies: each sets RINGMM_HAVE_<X> to ON or OFF. AUTO means "use it when found".

function(ringmm_require_if name value found)
  if(value STREQUAL "ON" AND NOT found)
    message(FATAL_ERROR "RINGMM_ENABLE_${name}=ON but ${name} was not found")
  endif()
endfunction()

# ---- CUDA --------------------------------------------------------------------------------------
set(RINGMM_HAVE_CUDA OFF)
if(NOT RINGMM_ENABLE_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Architectures, unless CMAKE_CUDA_ARCHITECTURES names them: RINGMM_CUDA_ARCHS=portable (the
    # package and the release preset) builds every GPU since Ampere, sm_80/86/89 and Hopper's
    # arch-specific 90a as machine code, with compute_90 PTX that the driver JIT-compiles for newer
    # GPUs (Blackwell); native (the default) builds for the GPU present only, or 90a without one.
    set(RINGMM_CUDA_ARCHS "native" CACHE STRING "CUDA architectures when CMAKE_CUDA_ARCHITECTURES is unset: native or portable")
    set_property(CACHE RINGMM_CUDA_ARCHS PROPERTY STRINGS native portable)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      if(RINGMM_CUDA_ARCHS STREQUAL "portable")
        set(ringmm_arch "80-real;86-real;89-real;90a-real;90-virtual")
      elseif(RINGMM_CUDA_ARCHS STREQUAL "native")
        set(ringmm_arch 90a)
        find_program(RINGMM_NVIDIA_SMI nvidia-smi)
        if(RINGMM_NVIDIA_SMI)
          execute_process(COMMAND ${RINGMM_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                          OUTPUT_VARIABLE ringmm_cap RESULT_VARIABLE ringmm_smi_rc ERROR_QUIET
                          OUTPUT_STRIP_TRAILING_WHITESPACE)
          if(ringmm_smi_rc EQUAL 0 AND ringmm_cap MATCHES "^([0-9]+)\\.([0-9]+)")
            set(ringmm_arch "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
            if(ringmm_arch STREQUAL "90")
              set(ringmm_arch 90a)
            endif()
          endif()
        endif()
      else()
        message(FATAL_ERROR "RINGMM_CUDA_ARCHS is '${RINGMM_CUDA_ARCHS}': native or portable")
      endif()
      set(CMAKE_CUDA_ARCHITECTURES ${ringmm_arch} CACHE STRING "CUDA architectures" FORCE)
    endif()
    enable_language(CUDA)
    # CMake 3.25 does not know nvcc 13's C++20 flag; tell it.
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    # CMake 3.25 does not know nvcc's C++20 flag; pass it directly.
    find_package(CUDAToolkit REQUIRED)
    set(RINGMM_HAVE_CUDA ON)
  endif()
endif()
ringmm_require_if(CUDA "${RINGMM_ENABLE_CUDA}" RINGMM_HAVE_CUDA)

# ---- OpenMP (required: the CPU backend is multi-threaded) --------------------------------------
find_package(OpenMP REQUIRED COMPONENTS CXX)

# ---- BLAS --------------------------------------------------------------------------------------
set(RINGMM_HAVE_BLAS OFF)
if(NOT RINGMM_ENABLE_BLAS STREQUAL "OFF")
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS QUIET)
  find_path(RINGMM_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-pthread)
  if(BLAS_FOUND AND RINGMM_CBLAS_INCLUDE)
    set(RINGMM_HAVE_BLAS ON)
  endif()
endif()
ringmm_require_if(BLAS "${RINGMM_ENABLE_BLAS}" RINGMM_HAVE_BLAS)

# ---- MPI and NCCL ------------------------------------------------------------------------------
set(RINGMM_HAVE_MPI OFF)
set(RINGMM_HAVE_NCCL OFF)
if(NOT RINGMM_ENABLE_MPI STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(RINGMM_HAVE_MPI ON)
  endif()
endif()
ringmm_require_if(MPI "${RINGMM_ENABLE_MPI}" RINGMM_HAVE_MPI)
if(RINGMM_HAVE_MPI AND RINGMM_HAVE_CUDA)
  # NCCL: the CUDA toolkit's copy, or the nvidia-nccl Python wheel on the GPU machines.
  execute_process(COMMAND python3 -c "import nvidia.nccl as m; print(m.__path__[0])"
                  OUTPUT_VARIABLE ringmm_nccl_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  find_path(RINGMM_NCCL_INCLUDE nccl.h HINTS ${ringmm_nccl_wheel}/include ${CUDAToolkit_INCLUDE_DIRS})
  find_library(RINGMM_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${ringmm_nccl_wheel}/lib ${CUDAToolkit_LIBRARY_DIR})
  if(RINGMM_NCCL_INCLUDE AND RINGMM_NCCL_LIBRARY)
    set(RINGMM_HAVE_NCCL ON)
  endif()
endif()
