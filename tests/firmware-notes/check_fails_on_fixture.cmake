# cmake -DCHECK=<check_no_outside_citations.cmake> -DWORK_DIR=<scratch folder> -P check_fails_on_fixture.cmake
# Builds a small tree with one outside citation and the allowed in-repository forms, runs the check on it (no GIT,
# so the folder walk), and fails unless the check fails naming exactly that file:line. The outside names are
# assembled from pieces so that this file passes the check itself.
file(REMOVE_RECURSE "${WORK_DIR}")
cmake_minimum_required(VERSION 3.25)
string(CONCAT outside_name "nv-" "hopper")
set(outside "${outside_name}.md")
string(CONCAT kfd "amd-" "kfd.md")
file(WRITE "${WORK_DIR}/compiler/a.h" "// line 1\n// line 2; with [brackets\n// see ${outside} §2.5 for the layout; [x]\n")
file(WRITE "${WORK_DIR}/compiler/b.h" "// descriptor layout: firmware-notes/${kfd} §3\n")
file(WRITE "${WORK_DIR}/firmware-notes/README.md" "- [${kfd}](${kfd}): AMD code objects\n")
file(WRITE "${WORK_DIR}/build/x/CMakeCache.txt" "# a build folder: skipped\n")
file(WRITE "${WORK_DIR}/build/x/generated.h" "// ${outside}\n")
execute_process(COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${WORK_DIR}" -P "${CHECK}"
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(report "exit code: ${exit_code}\nstdout:\n${out}\nstderr:\n${err}")
if(exit_code EQUAL 0)
  message(FATAL_ERROR "the check passed a tree with an outside citation\n${report}")
endif()
if(NOT err MATCHES "compiler/a\\.h:3: cites '${outside_name}': // see [^\n]* for the layout; \\[x\\]")
  message(FATAL_ERROR "the check did not name compiler/a.h:3\n${report}")
endif()
if(err MATCHES "compiler/b\\.h|firmware-notes/README\\.md|generated\\.h" OR NOT err MATCHES "[^0-9]1 citation")
  message(FATAL_ERROR "the check flagged an allowed form or a build folder\n${report}")
endif()
message("${report}")
