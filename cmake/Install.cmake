# `cmake --install`: the libraries a compiler's own tests link (the checker
# and what it stands on, check-sharding's rendering, the public API), their
# headers under include/shardcheck/ (the paths the sources use:
# checker/CheckDocument.h, shardcheck/Check.h, ...), check-sharding, and a
# CMake package: find_package(shardcheck) gives shardcheck::shardcheck (the
# API: shardcheck/Check.h, shardcheck/GTest.h) and shardcheck::sc_<library>.
# examples/consumer/ is such a project; tests/ExampleConsumer.sh builds and
# runs it against an installed tree (ctest ExampleConsumer).
#
# This file does not install the executor, run-plan, the brute-force
# evaluator, the fuzz harnesses or the tests.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SC_INSTALLED_LIBRARIES sc_util sc_ir sc_dtensor sc_plan sc_lowering sc_smt sc_checker sc_tool_common sc_check_sharding
                           sc_api)
set(SC_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/shardcheck)
foreach(library IN LISTS SC_INSTALLED_LIBRARIES)
  target_include_directories(${library} INTERFACE $<INSTALL_INTERFACE:${SC_INSTALL_INCLUDEDIR}>)
endforeach()
# Instrumented libraries need the sanitizer runtimes in whatever links them,
# and code sharing their containers is instrumented alike (ASan's container
# annotations).
if(SHARDCHECK_SANITIZE)
  target_compile_options(sc_util INTERFACE $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
  target_link_options(sc_util INTERFACE $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
endif()

install(TARGETS ${SC_INSTALLED_LIBRARIES} EXPORT shardcheckTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET check-sharding)
  install(TARGETS check-sharding RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
foreach(folder util ir dtensor plan checker tools/common tools/check_sharding)
  get_filename_component(parent ${folder} DIRECTORY)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${folder} DESTINATION ${SC_INSTALL_INCLUDEDIR}/${parent}
          FILES_MATCHING PATTERN "*.h"
          PATTERN "bruteforce" EXCLUDE PATTERN "Z3Solve.h" EXCLUDE)
endforeach()
install(DIRECTORY ${CMAKE_SOURCE_DIR}/api/shardcheck DESTINATION ${SC_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

set(SC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/shardcheck)
install(EXPORT shardcheckTargets NAMESPACE shardcheck:: DESTINATION ${SC_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/shardcheckConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/shardcheckConfig.cmake
                              INSTALL_DESTINATION ${SC_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/shardcheckConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/shardcheckConfig.cmake
              ${CMAKE_BINARY_DIR}/shardcheckConfigVersion.cmake DESTINATION ${SC_CMAKE_DIR})
