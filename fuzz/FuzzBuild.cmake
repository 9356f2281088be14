# The fuzz build's flags (SHARDCHECK_FUZZ=ON; included by the top-level
# CMakeLists.txt before any library is defined).
#
# Every translation unit of the build (sc_util, sc_ir, sc_smt, sc_checker,
# sc_check_sharding, sc_executor, sc_run_plan and the harnesses) is compiled
# with libFuzzer's coverage instrumentation (-fsanitize=fuzzer-no-link) and,
# through SHARDCHECK_SANITIZE, AddressSanitizer and UndefinedBehaviorSanitizer
# with recovery off, so that a bug anywhere under a harness aborts it. Only
# the harness executables link libFuzzer itself (-fsanitize=fuzzer, in
# fuzz/CMakeLists.txt). The nccl backend (CUDA does not mix with ASan) and the
# GoogleTest suite and the mpi backend are turned off.
#
# This file does not define targets and does not pick harnesses or run them.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "SHARDCHECK_FUZZ needs clang (libFuzzer): configure with "
                      "-DCMAKE_CXX_COMPILER=clang++ (this build uses "
                      "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER})")
endif()
set(SHARDCHECK_SANITIZE ON)
set(SHARDCHECK_ENABLE_GPU OFF)
set(SHARDCHECK_BUILD_TESTS OFF)
# The harnesses run the sim backend only: no MPI in this build.
set(CMAKE_DISABLE_FIND_PACKAGE_MPI ON)
add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
message(STATUS "shardcheck: fuzz build (libFuzzer + ASan + UBSan), GPU and tests off")
