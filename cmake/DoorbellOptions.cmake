# Build options and optional dependencies. Each optional dependency is searched for only when its option is not
# explicitly OFF; its option defaults to whether the search succeeded, and forcing it ON without the dependency is a
# configure error that names the package to install.

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type (default Release)" FORCE)
endif()

option(DOORBELL_SANITIZE "Build everything with ASan + UBSan" OFF)
option(DOORBELL_TSAN "Build everything with ThreadSanitizer" OFF)
if(DOORBELL_SANITIZE AND DOORBELL_TSAN)
  message(FATAL_ERROR "DOORBELL_SANITIZE (ASan + UBSan) and DOORBELL_TSAN cannot be combined (the sanitizers exclude "
                      "each other); configure a build directory for each")
endif()
if(DOORBELL_TSAN)
  set(doorbell_tsan_flags -fsanitize=thread -fno-omit-frame-pointer)
  add_compile_options(${doorbell_tsan_flags})
  add_link_options(${doorbell_tsan_flags})
  # GCC warns that TSan does not model a standalone std::atomic_thread_fence. Ours order a queue's memory-barrier
  # command; what orders threads (signals, locks, the devices' job hand-off) is atomics and mutexes, which it models.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-tsan)
  endif()
endif()
option(DOORBELL_WERROR "Treat compiler warnings as errors" OFF)

if(NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(DOORBELL_CCACHE ccache)
  if(DOORBELL_CCACHE)
    set(CMAKE_CXX_COMPILER_LAUNCHER "${DOORBELL_CCACHE}")
  endif()
endif()

# doorbell_optional_dependency(<option> <description> <debian package> <package> [find_package args...])
# <package>_FOUND decides the option's default; when <package>_ACCEPT_CHECK names a function, that function may veto a
# package that was found (it gets the name of the variable to set FALSE; see LLVM below).
macro(doorbell_optional_dependency option description debian_package package)
  if(NOT DEFINED ${option} OR ${option})
    find_package(${package} ${ARGN} QUIET)
    set(doorbell_found_ ${${package}_FOUND})
    if(doorbell_found_ AND DEFINED ${package}_ACCEPT_CHECK)
      cmake_language(CALL ${${package}_ACCEPT_CHECK} doorbell_found_)
    endif()
    if(DEFINED ${option} AND ${option} AND NOT doorbell_found_)
      message(FATAL_ERROR "${option} is ON but ${package} was not found: install (on Debian) "
                          "${debian_package} or configure with -D${option}=OFF")
    endif()
    option(${option} "${description}" ${doorbell_found_})
  else()
    option(${option} "${description}" OFF)
  endif()
endmacro()

# LLVM's version file accepts only an exact major.minor, so search without a version (preferring llvm-19's
# directory) and accept any 19.x.
function(doorbell_accept_llvm result_var)
  if(NOT LLVM_VERSION_MAJOR EQUAL 19)
    message(STATUS "LLVM ${LLVM_PACKAGE_VERSION} at ${LLVM_DIR} is not LLVM 19; not using it")
    set(${result_var} FALSE PARENT_SCOPE)
  endif()
endfunction()
set(LLVM_ACCEPT_CHECK doorbell_accept_llvm)

# One switch for a machine without our Debian packages (a lent GPU machine: g++, CMake, ninja, CUDA): every optional
# dependency off, so the libraries, `doorbell` and `doorbell check` build from the compiler alone.
option(DOORBELL_MINIMAL "Switch every optional dependency off (LLVM, GoogleTest, Google Benchmark, libpciaccess, Vulkan)" OFF)
if(DOORBELL_MINIMAL)
  foreach(dependency_option DOORBELL_WITH_LLVM DOORBELL_WITH_TESTS DOORBELL_WITH_BENCH DOORBELL_WITH_PCIACCESS
          DOORBELL_WITH_VULKAN)
    set(${dependency_option} OFF CACHE BOOL "switched off by DOORBELL_MINIMAL" FORCE)
  endforeach()
endif()

doorbell_optional_dependency(DOORBELL_WITH_LLVM "Build the parts that use LLVM 19" llvm-19-dev
  LLVM CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm)
doorbell_optional_dependency(DOORBELL_WITH_TESTS "Build the GoogleTest suites" "libgtest-dev libgmock-dev"
  GTest CONFIG)
doorbell_optional_dependency(DOORBELL_WITH_BENCH "Build the Google Benchmark suites" libbenchmark-dev
  benchmark CONFIG)
# PCI discovery reads BARs and ids through libpciaccess where it is installed, and sysfs alone elsewhere
# (kernel-interface/pci/pci_source.h); the code sees DOORBELL_HAVE_PCIACCESS=1 or 0 (cmake/FindPciaccess.cmake).
doorbell_optional_dependency(DOORBELL_WITH_PCIACCESS "Read PCI devices through libpciaccess" libpciaccess-dev
  Pciaccess)
# The Vulkan backend (hcq/vk/, DEV=VK) links the Vulkan loader (libvulkan) and includes its headers; its tests run on
# Mesa's lavapipe (mesa-vulkan-drivers) and check every SPIR-V module with spirv-val (spirv-tools). The SPIR-V
# renderer itself (compiler/spirv/) needs none of them and is always built.
doorbell_optional_dependency(DOORBELL_WITH_VULKAN "Build the Vulkan backend (DEV=VK)" libvulkan-dev Vulkan)

if(DOORBELL_WITH_LLVM)
  # Only the compiler layer links LLVM (compiler/gpu/llvm/: the in-process AMDGPU compiler), so it stays out of the
  # other layers and a machine without LLVM still builds everything else.
  message(STATUS "LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
endif()
