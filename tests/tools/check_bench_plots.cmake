# cmake -DDOORBELL=<doorbell> -DDIR=<folder> -P check_bench_plots.cmake
# Runs `doorbell bench --plot DIR` with DIR absent and fails unless it exits 0, says where each plot went, and each
# file is there as a whole SVG document.
file(REMOVE_RECURSE "${DIR}")
execute_process(COMMAND "${DOORBELL}" bench --plot "${DIR}"
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(report "exit code: ${exit_code}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT exit_code STREQUAL "0")
  message(FATAL_ERROR "expected exit code 0\n${report}")
endif()
foreach(name latency_cdf.svg kernel_vs_floor.svg latency_devices_cdf.svg)
  if(NOT out MATCHES "bench: plot written to ${DIR}/${name}\n")
    message(FATAL_ERROR "expected a line 'bench: plot written to ${DIR}/${name}'\n${report}")
  endif()
  if(NOT EXISTS "${DIR}/${name}")
    message(FATAL_ERROR "expected ${DIR}/${name} to exist\n${report}")
  endif()
  file(READ "${DIR}/${name}" svg)
  if(NOT svg MATCHES "^<svg xmlns=\"http://www.w3.org/2000/svg\"[^\n]*>\n.*</svg>\n$")
    message(FATAL_ERROR "expected ${DIR}/${name} to hold one SVG document, got:\n${svg}")
  endif()
endforeach()
message("${report}")
