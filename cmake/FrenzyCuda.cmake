# FrenzyCuda.cmake - finds what the CUDA/NCCL backend needs (docs/cuda.md).
#
# Sets FRENZY_HAVE_CUDA (ON when the CUDA backend is built), enables the
# CUDA language for sm_80 and sm_90, and defines FRENZY_NCCL_LIBRARY and
# FRENZY_NCCL_INCLUDE_DIR. FRENZY_CUDA=AUTO turns the backend off, saying
# why, when any part is missing; FRENZY_CUDA=ON stops the configure.
set(FRENZY_HAVE_CUDA OFF)
string(TOUPPER "${FRENZY_CUDA}" _frenzy_cuda)
if(NOT _frenzy_cuda MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "FRENZY_CUDA=${FRENZY_CUDA}: use AUTO, ON or OFF")
endif()

macro(_frenzy_cuda_missing what)
  if(_frenzy_cuda STREQUAL "ON")
    message(FATAL_ERROR "FRENZY_CUDA=ON but ${what}; install the CUDA "
            "toolkit and NCCL (or set CUDAToolkit_ROOT), or use FRENZY_CUDA=AUTO")
  endif()
  set(_frenzy_cuda_why "${what}")
endmacro()

if(_frenzy_cuda STREQUAL "OFF")
  set(_frenzy_cuda_why "FRENZY_CUDA=OFF")
else()
  # CUDA is not a Debian package here: look in /usr/local/cuda too.
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX}
     AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    _frenzy_cuda_missing("no CUDA compiler (nvcc) was found")
  else()
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Ampere and Hopper: the kernels use bf16 tensor cores (sm_80+).
      set(CMAKE_CUDA_ARCHITECTURES "80;90")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
    find_path(FRENZY_NCCL_INCLUDE_DIR nccl.h
              HINTS ${CUDAToolkit_INCLUDE_DIRS} $ENV{NCCL_HOME}/include)
    find_library(FRENZY_NCCL_LIBRARY nccl
                 HINTS ${CUDAToolkit_LIBRARY_DIR} $ENV{NCCL_HOME}/lib)
    if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cublasLt)
      _frenzy_cuda_missing("the CUDA toolkit (cudart, cuBLAS, cuBLASLt) was not found")
    elseif(NOT FRENZY_NCCL_INCLUDE_DIR OR NOT FRENZY_NCCL_LIBRARY)
      _frenzy_cuda_missing("NCCL (nccl.h, libnccl) was not found")
    else()
      set(FRENZY_HAVE_CUDA ON)
    endif()
  endif()
endif()

# The backend proper needs the kernels (runtime/cuda/kernels, issue 16):
# every .cu its CMakeLists names must be there (a tree checked out while
# they are being written still configures, CPU-only, saying why).
set(FRENZY_CUDA_BACKEND OFF)
# This file lives in cmake/ of the source tree, whichever project includes it.
set(_frenzy_kernels ${CMAKE_CURRENT_LIST_DIR}/../runtime/cuda/kernels)
if(FRENZY_HAVE_CUDA AND EXISTS ${_frenzy_kernels}/CMakeLists.txt)
  file(READ ${_frenzy_kernels}/CMakeLists.txt _frenzy_text)
  string(REGEX MATCHALL "[A-Za-z0-9_]+\\.cu[ \n)]" _frenzy_cus "${_frenzy_text}")
  set(_frenzy_missing "")
  foreach(_cu ${_frenzy_cus})
    string(REGEX REPLACE "[ \n)]$" "" _cu "${_cu}")
    if(NOT EXISTS ${_frenzy_kernels}/${_cu})
      list(APPEND _frenzy_missing ${_cu})
    endif()
  endforeach()
  if(_frenzy_missing)
    set(_frenzy_cuda_why "runtime/cuda/kernels lacks ${_frenzy_missing}")
    _frenzy_cuda_missing("${_frenzy_cuda_why}")
  else()
    set(FRENZY_CUDA_BACKEND ON)
  endif()
endif()

if(FRENZY_CUDA_BACKEND)
  message(STATUS "Frenzy: CUDA backend ON (CUDA ${CUDAToolkit_VERSION}, "
          "sm ${CMAKE_CUDA_ARCHITECTURES}, NCCL ${FRENZY_NCCL_LIBRARY})")
else()
  message(STATUS "Frenzy: CUDA backend OFF (${_frenzy_cuda_why}): "
          "frenzy-launch runs the CPU backend only")
endif()
