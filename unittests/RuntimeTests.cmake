# RuntimeTests.cmake - the runtime's unit tests (no MLIR), included by
# runtime/CMakeLists.txt in the root build and in the runtime-only build.
# Paths are this file's: the including directory is runtime/.
set(_frenzy_ut ${CMAKE_CURRENT_LIST_DIR})

# One test executable in <build>/unittests; alone, ctest runs it too (the
# root build's lit finds it there: test/Unit/lit.cfg.py).
function(frenzy_runtime_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  list(TRANSFORM T_SOURCES PREPEND ${_frenzy_ut}/)
  add_executable(${name} ${T_SOURCES})
  target_compile_options(${name} PRIVATE -fexceptions)
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  set_target_properties(${name} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/unittests)
  if(FRENZY_RUNTIME_ALONE)
    add_test(NAME ${name} COMMAND ${name})
  endif()
endfunction()

# The CPU kernels alone. CounterRng.h (the CUDA kernels' host/device
# helpers) is header-only and tested on the CPU even where no CUDA toolkit
# is installed.
frenzy_runtime_test(FrenzyRuntimeTests
  SOURCES runtime/CpuKernelsTest.cpp runtime/TensorOpsTest.cpp
          runtime/TensorOpsMovementTest.cpp runtime/CudaCounterRngTest.cpp
          runtime/OpsTest.cpp
  # OpsTest walks the op list through the executor's tables (FrenzyExec:
  # no MLIR either).
  LIBS FrenzyCpuKernels FrenzyExec)
target_include_directories(FrenzyRuntimeTests PRIVATE
  ${FRENZY_SOURCE_DIR}/runtime/cuda/kernels)

# The CUDA backend's host-side logic (allocator bookkeeping, stream order,
# communicator set-up, device checks): no GPU and no CUDA toolkit needed.
frenzy_runtime_test(FrenzyCudaHostTests
  SOURCES cuda/CachingAllocatorTest.cpp cuda/StreamOrderTest.cpp
          cuda/CommPlanTest.cpp cuda/DeviceSelectTest.cpp
          cuda/PrecisionPlanTest.cpp
  LIBS FrenzyCudaHost)

# The CUDA backend's device library, where it is built: its tables and the
# device probe, with or without a GPU.
if(FRENZY_CUDA_BACKEND)
  frenzy_runtime_test(FrenzyCudaDeviceTests SOURCES cuda/CudaOpsTest.cpp
    LIBS FrenzyCuda)
endif()

# Checkpoint files and resharding, and the DP pieces' slice copies (the
# executor library).
frenzy_runtime_test(FrenzyCheckpointTests
  SOURCES runtime/CheckpointFormatTest.cpp runtime/SliceCopyTest.cpp
  LIBS FrenzyExec)

# The elastic supervisor's library: cluster files it derives, children it
# runs within time limits.
frenzy_runtime_test(FrenzyElasticTests
  SOURCES elastic/MembershipTest.cpp elastic/ProcessesTest.cpp
          elastic/LostRanksTest.cpp
  LIBS FrenzyElastic)
