# cmake -DPROGRAM=<path> [-DARGS="<space-separated args>"] -DEXPECT_EXIT=<code> [-DEXPECT_STDOUT=<regex>] [-DEXPECT_STDERR=<regex>]
#       -P CheckCommand.cmake
# Runs a program and fails unless its exit code and output match; used for tests of command-line programs.
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${args} RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(report "command: ${PROGRAM} ${ARGS}\nexit code: ${exit_code}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT exit_code STREQUAL EXPECT_EXIT)
  message(FATAL_ERROR "expected exit code ${EXPECT_EXIT}\n${report}")
endif()
if(DEFINED EXPECT_STDOUT AND NOT out MATCHES "${EXPECT_STDOUT}")
  message(FATAL_ERROR "expected stdout to match '${EXPECT_STDOUT}'\n${report}")
endif()
if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "expected stderr to match '${EXPECT_STDERR}'\n${report}")
endif()
message("${report}")
