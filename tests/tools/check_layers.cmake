# Usage: cmake -DSRC=<repository> -P check_layers.cmake
# The runtime (runtime/) depends on nothing of the compiler and never on MLIR: no file under it
# includes a header of src/ (compiler/, frontend/, codegen/), of ir/ or of MLIR. The CMake targets
# enforce the first (src/ is not on tessera_runtime's include path); MLIR's headers share a
# directory with LLVM's, which the runtime uses (Support), so this test enforces the rest.
file(GLOB_RECURSE files "${SRC}/runtime/*.h" "${SRC}/runtime/*.cpp" "${SRC}/runtime/*.def")
set(bad "")
foreach(f IN LISTS files)
  file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<](compiler|frontend|codegen|mlir|tessera/Dialect|tessera/Conversion)/")
  foreach(line IN LISTS lines)
    file(RELATIVE_PATH rel "${SRC}" "${f}")
    string(APPEND bad "\n  ${rel}: ${line}")
  endforeach()
endforeach()
list(LENGTH files count)
if(bad)
  message(FATAL_ERROR "the runtime includes the compiler or MLIR:${bad}")
endif()
message(STATUS "${count} runtime files include neither the compiler nor MLIR")
