# cmake -DSOURCE_DIR=<repository root> [-DGIT=<git executable>] -P check_no_outside_citations.cmake
# Fails, naming file:line, when a file of the repository cites a document that lives outside it: the team's
# reference notes (their file names below, or the folder they were kept in). Comments must cite the public source
# or a firmware-notes/ section instead (firmware-notes/README.md).
# Files: those git tracks plus untracked ones git does not ignore (git ls-files), or, without git or outside a git
# checkout, every file under the root except .git, shared/ and build folders.
cmake_minimum_required(VERSION 3.25)
if(NOT SOURCE_DIR OR NOT IS_DIRECTORY "${SOURCE_DIR}")
  message(FATAL_ERROR "SOURCE_DIR='${SOURCE_DIR}' is not a folder; expected the repository root")
endif()

# What an outside citation looks like. `amd-kfd` is also the name of firmware-notes/amd-kfd.md, which is allowed
# (see allowed_forms).
set(outside_patterns
  "nv-hopper" "nv-audit" "tinygrad-hcq" "tinygrad-compiler" "anchors\\.md" "amd-kfd" "shared/reference"
  "work/shared" "reference §")
string(JOIN "|" any_outside ${outside_patterns})
# In-repository forms removed from a line before it is matched: the firmware note itself, and (inside
# firmware-notes/ only) the relative links between the notes.
set(allowed_forms "firmware-notes/amd-kfd\\.md")
# This script spells the patterns out, so it is the one file not checked.
set(self "tests/firmware-notes/check_no_outside_citations.cmake")

set(files "")
set(listed FALSE)
if(GIT)
  execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" ls-files --cached --others --exclude-standard
                  RESULT_VARIABLE git_exit OUTPUT_VARIABLE git_out ERROR_QUIET)
  if(git_exit EQUAL 0)
    string(REPLACE "\n" ";" files "${git_out}")
    set(listed TRUE)
  endif()
endif()
if(NOT listed)
  file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*")
  file(GLOB_RECURSE build_caches RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*CMakeCache.txt")
  set(skip_prefixes ".git/" "shared/")
  foreach(cache IN LISTS build_caches)
    get_filename_component(build_dir "${cache}" DIRECTORY)
    list(APPEND skip_prefixes "${build_dir}/")
  endforeach()
  set(kept "")
  foreach(f IN LISTS files)
    set(skip FALSE)
    foreach(prefix IN LISTS skip_prefixes)
      string(FIND "${f}" "${prefix}" at)
      if(at EQUAL 0)
        set(skip TRUE)
        break()
      endif()
    endforeach()
    if(NOT skip)
      list(APPEND kept "${f}")
    endif()
  endforeach()
  set(files "${kept}")
endif()

set(found 0)
set(report "")
list(LENGTH files checked)
foreach(f IN LISTS files)
  if(f STREQUAL "" OR f STREQUAL self OR NOT EXISTS "${SOURCE_DIR}/${f}" OR IS_DIRECTORY "${SOURCE_DIR}/${f}")
    continue()
  endif()
  # A fast first look; only files with a candidate are read line by line.
  file(STRINGS "${SOURCE_DIR}/${f}" candidates REGEX "${any_outside}" ENCODING UTF-8)
  if(NOT candidates)
    continue()
  endif()
  file(READ "${SOURCE_DIR}/${f}" content)
  # One list element per line: characters that CMake lists treat specially are replaced first.
  string(REPLACE ";" "<semicolon>" content "${content}")
  string(REPLACE "[" "<lbracket>" content "${content}")
  string(REPLACE "]" "<rbracket>" content "${content}")
  string(REPLACE "\n" ";" lines "${content}")
  set(in_notes FALSE)
  if(f MATCHES "^firmware-notes/")
    set(in_notes TRUE)
  endif()
  set(line_number 0)
  foreach(line IN LISTS lines)
    math(EXPR line_number "${line_number} + 1")
    set(rest "${line}")
    foreach(form IN LISTS allowed_forms)
      string(REGEX REPLACE "${form}" "" rest "${rest}")
    endforeach()
    if(in_notes)
      # "[amd-kfd.md](amd-kfd.md)", with [ and ] already replaced.
      foreach(form "\\(amd-kfd\\.md\\)" "<lbracket>amd-kfd\\.md<rbracket>")
        string(REGEX REPLACE "${form}" "" rest "${rest}")
      endforeach()
    endif()
    if(rest MATCHES "${any_outside}")
      math(EXPR found "${found} + 1")
      string(STRIP "${line}" shown)
      string(REPLACE "<semicolon>" ";" shown "${shown}")
      string(REPLACE "<lbracket>" "[" shown "${shown}")
      string(REPLACE "<rbracket>" "]" shown "${shown}")
      string(APPEND report "${f}:${line_number}: cites '${CMAKE_MATCH_0}': ${shown}\n")
    endif()
  endforeach()
endforeach()

if(found GREATER 0)
  # The lines first, unwrapped (a FATAL_ERROR message is re-wrapped), then the verdict.
  message("${report}")
  message(FATAL_ERROR "${found} citation(s) of documents outside the repository (listed above); cite the public "
                      "source (repository, path and line) or a firmware-notes/ section instead")
endif()
message(STATUS "no citation of an outside document in ${checked} files")
