# cmake -DNM=<nm> -DPROGRAM=<runtime_only_program> -DLINK_CLOSURE=<file> -P check_no_emulator.cmake
# Fails when a program that links only the runtime holds the emulator: a doorbell::mockgpu symbol in its binary, or
# doorbell_mockgpu among the libraries its link reaches (LINK_CLOSURE, written at configure time), which catches a
# link re-added to a runtime library even before any code uses it.
execute_process(COMMAND "${NM}" -C "${PROGRAM}" RESULT_VARIABLE nm_exit OUTPUT_VARIABLE symbols ERROR_VARIABLE nm_err)
if(NOT nm_exit EQUAL 0)
  message(FATAL_ERROR "${NM} -C ${PROGRAM} failed (${nm_exit}): ${nm_err}")
endif()
if(NOT symbols MATCHES "doorbell::nv::NvDevice::open\\(")
  message(FATAL_ERROR "${PROGRAM} does not hold the NV device (no doorbell::nv::NvDevice::open); the check would prove nothing")
endif()
string(REGEX MATCHALL "[^\n]*doorbell::mockgpu::[^\n]*" emulator_symbols "${symbols}")
if(emulator_symbols)
  list(LENGTH emulator_symbols count)
  list(SUBLIST emulator_symbols 0 5 first)
  string(REPLACE ";" "\n  " first "${first}")
  message(FATAL_ERROR "${PROGRAM} links only the runtime but holds ${count} symbols of doorbell::mockgpu, e.g.\n  ${first}")
endif()
file(READ "${LINK_CLOSURE}" closure)
if(closure MATCHES "(^|;)doorbell_mockgpu(;|$)")
  message(FATAL_ERROR "the runtime's link reaches doorbell_mockgpu: ${closure}")
endif()
message("no emulator in ${PROGRAM}; its link reaches: ${closure}")
