# Third-party dependencies, all from Debian 12 packages (see README / scripts/setup.sh).
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(fmt REQUIRED)
find_package(Threads REQUIRED)
# DLPack (header only, libdlpack-dev) for ag::to_dlpack / ag::from_dlpack. No version asked:
# Debian's config says 0.1.0 whatever the header is; ag/dlpack.h checks DLPACK_VERSION >= 0.6.
find_package(dlpack REQUIRED CONFIG)
# oneDNN (libdnnl-dev) computes float32 convolutions. Its CMake package also looks for
# OpenCL; the header and the shared library are all agc needs.
find_path(AG_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp REQUIRED)
find_library(AG_DNNL_LIBRARY dnnl REQUIRED)
# MPI (Open MPI: libopenmpi-dev, openmpi-bin) for the optional agc::distribute target
# (docs/distributed.md). AUTO builds it when MPI is found; ON requires it (./test.sh).
set(AG_WITH_MPI AUTO CACHE STRING "Build agc::distribute on MPI: AUTO, ON or OFF")
set_property(CACHE AG_WITH_MPI PROPERTY STRINGS AUTO ON OFF)
set(AG_HAVE_MPI OFF)
if(NOT AG_WITH_MPI STREQUAL "OFF")
  # MPI's C API from C++ (the project enables no C compiler), without the removed C++ bindings.
  set(MPI_CXX_SKIP_MPICXX ON)
  if(AG_WITH_MPI STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS CXX)
  else()
    find_package(MPI QUIET COMPONENTS CXX)
  endif()
  if(MPI_CXX_FOUND)
    set(AG_HAVE_MPI ON)
    message(STATUS "agc: MPI ${MPI_CXX_VERSION} (${MPIEXEC_EXECUTABLE}): building agc::distribute")
  else()
    message(STATUS "agc: no MPI (libopenmpi-dev): not building agc::distribute")
  endif()
endif()

if(AG_WITH_LLVM)
  # LLVM's version file rejects a bare "19": it wants major.minor.
  if(NOT LLVM_DIR)
    set(LLVM_DIR /usr/lib/llvm-19/lib/cmake/llvm)
  endif()
  find_package(LLVM 19.1 REQUIRED CONFIG)
  # Without the explicit path CMake finds clang-14's config, whose targets name missing files.
  find_package(Clang REQUIRED CONFIG PATHS ${LLVM_LIBRARY_DIR}/cmake/clang NO_DEFAULT_PATH)
  message(STATUS "agc: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
  separate_arguments(AG_LLVM_DEFINITIONS NATIVE_COMMAND "${LLVM_DEFINITIONS}")

  # Debian ships LLVM and Clang as single shared libraries; never mix in static components.
  add_library(agc_llvm INTERFACE)
  target_include_directories(agc_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
  target_compile_definitions(agc_llvm INTERFACE ${AG_LLVM_DEFINITIONS})
  target_link_libraries(agc_llvm INTERFACE LLVM)

  # agc::llvm: libLLVM as an imported target of agc's own, so that the exported libag_jit names
  # it and agcConfig.cmake defines it from the library's path. A consumer then never imports
  # LLVM's CMake package (whose targets -- `opt`, `llc`, ... -- clash with the consumer's, and
  # whose configure looks for LibEdit, zstd, CURL).
  get_target_property(ag_llvm_configs LLVM IMPORTED_CONFIGURATIONS)
  foreach(config IN LISTS ag_llvm_configs ITEMS "")
    set(suffix "")
    if(config)
      set(suffix "_${config}")
    endif()
    get_target_property(AG_LLVM_SHARED_LIBRARY LLVM IMPORTED_LOCATION${suffix})
    if(AG_LLVM_SHARED_LIBRARY)
      break()
    endif()
  endforeach()
  if(NOT AG_LLVM_SHARED_LIBRARY MATCHES "\\.so")
    message(FATAL_ERROR "agc: LLVM is not the shared libLLVM (${AG_LLVM_SHARED_LIBRARY}): install llvm-19-dev")
  endif()
  add_library(agc::llvm SHARED IMPORTED GLOBAL)
  set_target_properties(agc::llvm PROPERTIES IMPORTED_LOCATION "${AG_LLVM_SHARED_LIBRARY}")

  add_library(agc_clang INTERFACE)
  target_include_directories(agc_clang SYSTEM INTERFACE ${CLANG_INCLUDE_DIRS})
  target_link_libraries(agc_clang INTERFACE agc_llvm clang-cpp)

  find_program(AG_FILECHECK FileCheck HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
endif()
