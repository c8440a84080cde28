# Test and benchmark registration. Every test carries labels from one closed list, so `ctest -L <label>` selects a
# layer or a kind of test; a typo in a label would silently drop a test from its selection, so it fails configure.

set(DOORBELL_TEST_LABELS ir fuzz frontend scheduler compiler hcq jit e2e gpucodegen nv amd x86 vk mock device bench spirv)

# doorbell_check_labels(<what> <labels...>): fatal error unless there is at least one label and all are known.
function(doorbell_check_labels what)
  if(ARGC LESS 2)
    message(FATAL_ERROR "${what}: LABELS is required; expected one or more of: ${DOORBELL_TEST_LABELS}")
  endif()
  foreach(label IN LISTS ARGN)
    if(NOT label IN_LIST DOORBELL_TEST_LABELS)
      string(REPLACE ";" " " allowed "${DOORBELL_TEST_LABELS}")
      message(FATAL_ERROR "${what}: unknown test label '${label}'; expected one of: ${allowed}")
    endif()
  endforeach()
endfunction()

# doorbell_add_gtest(NAME <target> SOURCES <files...> LABELS <labels...> [LIBS <libs...>]
#                    [TEST_PREFIX <prefix>] [ENVIRONMENT <VAR=value>])
# Builds a GoogleTest executable and registers each of its cases as its own ctest test with the given labels.
# A case that calls GTEST_SKIP() is reported by ctest as skipped, not passed. TEST_PREFIX and ENVIRONMENT are passed
# to doorbell_discover_gtest.
function(doorbell_add_gtest)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;TEST_PREFIX" "SOURCES;LABELS;LIBS;ENVIRONMENT")
  if(NOT arg_NAME)
    message(FATAL_ERROR "doorbell_add_gtest: NAME <target> is required")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "doorbell_add_gtest(${arg_NAME}): SOURCES <files...> is required")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "doorbell_add_gtest(${arg_NAME}): unexpected arguments '${arg_UNPARSED_ARGUMENTS}'; "
                        "expected NAME, SOURCES, LABELS, LIBS, TEST_PREFIX, ENVIRONMENT")
  endif()
  doorbell_check_labels("doorbell_add_gtest(${arg_NAME})" ${arg_LABELS})

  add_executable(${arg_NAME} ${arg_SOURCES})
  target_link_libraries(${arg_NAME} PRIVATE ${arg_LIBS} GTest::gtest GTest::gtest_main)
  if(TARGET GTest::gmock)
    target_link_libraries(${arg_NAME} PRIVATE GTest::gmock)
  endif()
  doorbell_discover_gtest(TARGET ${arg_NAME} LABELS ${arg_LABELS} TEST_PREFIX "${arg_TEST_PREFIX}" ENVIRONMENT ${arg_ENVIRONMENT})
endfunction()

# doorbell_discover_gtest(TARGET <target> LABELS <labels...> [TEST_PREFIX <prefix>] [ENVIRONMENT <VAR=value>])
# Registers the cases of an existing GoogleTest executable as ctest tests, named <prefix><Suite.Case>, with the given
# labels and environment (plus DOORBELL_X86_FALLBACK=0 unless it names that variable). Call it again with another prefix to run the same binary's cases in a second configuration
# (e.g. TEST_PREFIX noopt. ENVIRONMENT NOOPT=1): the binary is built once and discovered twice.
function(doorbell_discover_gtest)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "TARGET;TEST_PREFIX" "LABELS;ENVIRONMENT")
  if(NOT arg_TARGET OR NOT TARGET ${arg_TARGET})
    message(FATAL_ERROR "doorbell_discover_gtest: TARGET <existing gtest executable> is required")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "doorbell_discover_gtest(${arg_TARGET}): unexpected arguments '${arg_UNPARSED_ARGUMENTS}'; "
                        "expected TARGET, LABELS, TEST_PREFIX, ENVIRONMENT")
  endif()
  doorbell_check_labels("doorbell_discover_gtest(${arg_TARGET})" ${arg_LABELS})
  # One TEST_LIST variable and labels file per discovery, so a second discovery does not relabel the first.
  set(list_id ${arg_TARGET})
  set(prefix_args)
  if(arg_TEST_PREFIX)
    string(MAKE_C_IDENTIFIER "${arg_TARGET}_${arg_TEST_PREFIX}" list_id)
    set(prefix_args TEST_PREFIX "${arg_TEST_PREFIX}")
  endif()
  set(properties SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

  # gtest_discover_tests (CMake 3.25) splits a list-valued property into separate arguments, so the labels and the
  # environment (lists: "DEV=NV;MOCKGPU=1") are set by a second include file that ctest reads after the discovered
  # tests (TEST_INCLUDE_FILES run in order).
  gtest_discover_tests(${arg_TARGET}
    PROPERTIES ${properties}
    ${prefix_args}
    TEST_LIST ${list_id}_TESTS
    DISCOVERY_TIMEOUT 60)
  # Every CPU kernel a test compiles is the x86 backend's own (DOORBELL_X86_FALLBACK=0, compiler/x86/x86_target.h):
  # a kernel it refused would fail the test instead of going to clang unseen. A registration may say otherwise.
  set(environment ${arg_ENVIRONMENT})
  if(NOT "${environment}" MATCHES "DOORBELL_X86_FALLBACK=")
    list(APPEND environment DOORBELL_X86_FALLBACK=0)
  endif()
  # Under ASan, LeakSanitizer reads tests/lsan_vulkan.supp: what lavapipe and the validation layer keep for a Vulkan
  # device that stays open until exit (the backend registry's); it names only those two modules
  # (firmware-notes/vulkan-device.md §3.1). tools/test.sh exports the same for the tests not registered here.
  if(DOORBELL_SANITIZE AND DOORBELL_WITH_VULKAN AND NOT "${environment}" MATCHES "LSAN_OPTIONS=")
    list(APPEND environment "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/lsan_vulkan.supp:print_suppressions=0")
  endif()
  set(labels_file "${CMAKE_CURRENT_BINARY_DIR}/${list_id}_labels.cmake")
  file(WRITE "${labels_file}"
    "if(${list_id}_TESTS)\n"
    "  set_tests_properties(\${${list_id}_TESTS} PROPERTIES LABELS \"${arg_LABELS}\" ENVIRONMENT \"${environment}\")\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_file}")
endfunction()

# doorbell_add_benchmark(NAME <target> SOURCES <files...> [LIBS <libs...>] [ARGS <args...>])
# Builds a Google Benchmark executable and registers it as one ctest test labelled `bench`, which writes its results
# as JSON to <build>/bench-results/<target>.json. ARGS are passed to the benchmark (e.g. --benchmark_min_time=0.1).
function(doorbell_add_benchmark)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME" "SOURCES;LIBS;ARGS")
  if(NOT arg_NAME OR NOT arg_SOURCES)
    message(FATAL_ERROR "doorbell_add_benchmark: NAME <target> and SOURCES <files...> are required")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "doorbell_add_benchmark(${arg_NAME}): unexpected arguments '${arg_UNPARSED_ARGUMENTS}'; "
                        "expected NAME, SOURCES, LIBS, ARGS")
  endif()
  add_executable(${arg_NAME} ${arg_SOURCES})
  target_link_libraries(${arg_NAME} PRIVATE ${arg_LIBS} benchmark::benchmark benchmark::benchmark_main)
  set(results_dir "${PROJECT_BINARY_DIR}/bench-results")
  file(MAKE_DIRECTORY "${results_dir}")
  add_test(NAME ${arg_NAME} COMMAND ${arg_NAME} ${arg_ARGS}
    --benchmark_out=${results_dir}/${arg_NAME}.json --benchmark_out_format=json)
  set_tests_properties(${arg_NAME} PROPERTIES LABELS bench RUN_SERIAL TRUE)
endfunction()

if(DOORBELL_WITH_TESTS)
  include(GoogleTest)
endif()
