# The agc CMake package: install rules, exported targets (agc::runtime, agc::jit, agc::agc,
# agc::ag-rewrite) and agcConfig.cmake, usable from this build tree and after `cmake --install`.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# agc::agc: everything an application links (eager + tracing + interpreter + the JIT backend).
add_library(agc INTERFACE)
add_library(agc::agc ALIAS agc)
target_link_libraries(agc INTERFACE ag_runtime $<$<TARGET_EXISTS:ag_jit>:ag_jit>)
