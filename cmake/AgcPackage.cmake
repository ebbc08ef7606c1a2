# The agc CMake package: install rules, the exported targets agc::runtime, agc::report, agc::jit, agc::agc,
# agc::ag-rewrite and (with MPI) agc::distribute, and agcConfig.cmake (with ag_rewrite_sources), usable from this build
# tree (agc_DIR=<build>) and after `cmake --install` (CMAKE_PREFIX_PATH=<prefix>).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# agc::agc: what an application links (eager + tracing + interpreter, the HTML report, and the
# JIT backend).
add_library(agc INTERFACE)
add_library(agc::agc ALIAS agc)
# A plain target name (not a generator expression) so that the export rewrites it to agc::jit:
# an installed agc::agc then links the JIT exactly as the build tree's does.
target_link_libraries(agc INTERFACE ag_runtime ag_report)
if(AG_WITH_LLVM)
  target_link_libraries(agc INTERFACE ag_jit)
endif()

# Only these are exported; build settings (warnings, LLVM headers, internal headers) are
# applied to them as properties, so the package names no helper target.
set(AG_EXPORTED_TARGETS ag_runtime ag_report agc)
if(AG_HAVE_MPI)
  list(APPEND AG_EXPORTED_TARGETS ag_distribute)
endif()
if(AG_WITH_LLVM)
  list(APPEND AG_EXPORTED_TARGETS ag_jit ag_jit_core ag-rewrite ag-aot)
endif()
install(TARGETS ${AG_EXPORTED_TARGETS} EXPORT agcTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(AG_WITH_LLVM)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/jit/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()

set(AG_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/agc)
install(EXPORT agcTargets NAMESPACE agc:: DESTINATION ${AG_PACKAGE_DIR})
export(EXPORT agcTargets NAMESPACE agc:: FILE ${PROJECT_BINARY_DIR}/agcTargets.cmake)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/agcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)

# The config file twice: in the build tree it includes the module from the sources, once
# installed the copy beside it.
set(AG_CONFIG_LLVM_DIR "${LLVM_DIR}")
set(AG_CONFIG_MODULE_DIR "${PROJECT_SOURCE_DIR}/tools/cmake")
configure_file(${CMAKE_CURRENT_LIST_DIR}/agcConfig.cmake.in ${PROJECT_BINARY_DIR}/agcConfig.cmake @ONLY)
set(AG_CONFIG_MODULE_DIR "\${CMAKE_CURRENT_LIST_DIR}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/agcConfig.cmake.in ${PROJECT_BINARY_DIR}/install/agcConfig.cmake @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/agcConfig.cmake ${PROJECT_BINARY_DIR}/agcConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/tools/cmake/AgRewrite.cmake ${PROJECT_SOURCE_DIR}/tools/cmake/AgAot.cmake
        DESTINATION ${AG_PACKAGE_DIR})

# agc.pc, for builds without CMake (installed only: its prefix is where the file is).
if(AG_WITH_LLVM)
  set(AG_PC_ANCHORS "-Wl,--undefined=agc_jit_anchor -Wl,--undefined=agc_report_anchor")
  set(AG_PC_LIBS "-lag_jit -lag_jit_core -lag_report -lag_runtime")
  set(AG_PC_SYSTEM_LIBS "${AG_LLVM_SHARED_LIBRARY}")
else()
  set(AG_PC_ANCHORS "-Wl,--undefined=agc_report_anchor")
  set(AG_PC_LIBS "-lag_report -lag_runtime")
  set(AG_PC_SYSTEM_LIBS "")
endif()
string(APPEND AG_PC_SYSTEM_LIBS " ${AG_DNNL_LIBRARY} -pthread ${CMAKE_DL_LIBS}")
string(REPLACE " dl" " -ldl" AG_PC_SYSTEM_LIBS "${AG_PC_SYSTEM_LIBS}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/agc.pc.in ${PROJECT_BINARY_DIR}/install/agc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/agc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
