# The library boundaries the build cannot see, checked over the sources
# (ctest LibraryBoundaries, label unit; run as
# `cmake -DSOURCE_DIR=<repo> -P tests/LibraryBoundaries.cmake`):
# - only checker/smt/ includes Z3 (z3.h, z3++.h, ...): Z3 is sc_smt's PRIVATE
#   dependency, but its headers sit in a system include directory where any
#   file could reach them;
# - checker/smt/ includes nothing else of checker/ (sc_smt is below sc_checker);
# - checker/bruteforce/ includes of checker/ only itself and the vocabulary
#   (checker/Lowering.h): the independent oracle shares none of the SMT
#   reasoning (sc_bruteforce does not link sc_smt);
# - util/ and ir/ include nothing of plan/, checker/, executor/ or tools/;
#   plan/ nothing of checker/, executor/ or tools/; executor/ nothing of
#   checker/ (it runs what a plan says); no library includes tools/ (the
#   tools sit on top); the public API (api/, shardcheck/*.h) sits on the
#   CLI library and only it, tests and examples include it;
# - dtensor/ (DTensor documents mapped to the IR) includes of shardcheck only
#   ir/, util/, checker/ (its cost model and verdicts) and itself, and nothing
#   else includes dtensor/ but tools/, tests/, fuzz/ and bench/;
# - the executor's backends stay apart: executor/core/ (the run loop) and
#   executor/'s own files include no backend (sim/, mpi/, gpu/) nor the host
#   buffers (host/); host/ includes no backend; sim/, mpi/ and gpu/ include
#   none of each other (tools/run_plan/ composes them), and gpu/ not host/.
#
# This file does not check link lines (CMakeLists.txt states those) and
# reads only the first include of a line.
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "LibraryBoundaries.cmake: pass -DSOURCE_DIR=<repository root>")
endif()

set(violations "")
# Reports `file` when one of its #include lines matches `pattern` and not
# `allowed` (a pattern too; "" allows nothing).
function(forbid_include file rel pattern allowed why)
  file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(line IN LISTS lines)
    if(line MATCHES "${pattern}" AND (allowed STREQUAL "" OR NOT line MATCHES "${allowed}"))
      string(STRIP "${line}" line)
      set(violations "${violations}\n  ${rel}: ${line} (${why})" PARENT_SCOPE)
    endif()
  endforeach()
endfunction()

file(GLOB top RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/*)
set(sources "")
foreach(dir IN LISTS top)
  # Build trees and hidden folders hold no sources of ours.
  if(NOT IS_DIRECTORY ${SOURCE_DIR}/${dir} OR dir MATCHES "^(build|\\.)")
    continue()
  endif()
  file(GLOB_RECURSE found RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/${dir}/*.h ${SOURCE_DIR}/${dir}/*.hpp
       ${SOURCE_DIR}/${dir}/*.cpp ${SOURCE_DIR}/${dir}/*.cc ${SOURCE_DIR}/${dir}/*.cu
       ${SOURCE_DIR}/${dir}/*.cuh)
  list(APPEND sources ${found})
endforeach()
list(LENGTH sources count)
if(count LESS 50)
  message(FATAL_ERROR "LibraryBoundaries.cmake: only ${count} sources under ${SOURCE_DIR}")
endif()

set(z3 "[<\"]z3[^/>\"]*[>\"]")
foreach(rel IN LISTS sources)
  set(file ${SOURCE_DIR}/${rel})
  if(NOT rel MATCHES "^checker/smt/")
    forbid_include(${file} ${rel} "${z3}" "" "only checker/smt/ includes Z3")
  else()
    forbid_include(${file} ${rel} "\"checker/" "\"checker/smt/" "checker/smt/ is below the checker")
  endif()
  if(rel MATCHES "^checker/bruteforce/")
    forbid_include(${file} ${rel} "\"checker/" "\"checker/(bruteforce/[^\"]*|Lowering\\.h)\""
                   "the brute force shares none of the SMT reasoning")
  endif()
  if(rel MATCHES "^(util|ir)/")
    forbid_include(${file} ${rel} "\"(plan|checker|executor|tools)/" "" "util and ir are below")
  endif()
  if(rel MATCHES "^plan/")
    forbid_include(${file} ${rel} "\"(checker|executor|tools)/" "" "plan is below the checker and executor")
  endif()
  if(rel MATCHES "^executor/")
    forbid_include(${file} ${rel} "\"checker/" "" "the executor runs plans and never links the checker")
  endif()
  if(rel MATCHES "^executor/(core/)?[^/]+$")
    forbid_include(${file} ${rel} "\"executor/(sim|mpi|gpu|host)/" ""
                   "the run loop and its parts know no backend")
  endif()
  if(rel MATCHES "^executor/host/")
    forbid_include(${file} ${rel} "\"executor/(sim|mpi|gpu)/" "" "host buffers know no backend")
  endif()
  foreach(backend sim mpi gpu)
    if(rel MATCHES "^executor/${backend}/")
      forbid_include(${file} ${rel} "\"executor/(sim|mpi|gpu)/" "\"executor/${backend}/"
                     "the backends stay apart")
    endif()
  endforeach()
  if(rel MATCHES "^executor/gpu/")
    forbid_include(${file} ${rel} "\"executor/host/" "" "the nccl backend holds no host buffers")
  endif()
  if(NOT rel MATCHES "^(tools|tests|fuzz|bench|api)/")
    forbid_include(${file} ${rel} "\"tools/" "" "the tools sit on top")
  endif()
  if(rel MATCHES "^(util|ir|plan|checker|executor|tools|dtensor)/")
    forbid_include(${file} ${rel} "[<\"]shardcheck/" "" "the public API (api/) sits on top")
  endif()
  if(rel MATCHES "^dtensor/")
    forbid_include(${file} ${rel} "\"[a-z]+/" "\"(ir|util|checker|dtensor)/"
                   "dtensor depends on ir and the checker only")
  elseif(NOT rel MATCHES "^(tools|tests|fuzz|bench|api)/")
    forbid_include(${file} ${rel} "\"dtensor/" "" "only the tools and tests use dtensor/")
  endif()
endforeach()

if(violations)
  message(FATAL_ERROR "library boundaries broken:${violations}")
endif()
message(STATUS "library boundaries hold over ${count} sources")
