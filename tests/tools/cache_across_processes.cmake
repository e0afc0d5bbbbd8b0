# Runs cache_probe in fresh processes against one cache directory (DIR) and checks the counters:
# cold compile, warm disk hit, corrupted entry recompiled, then two concurrent cold processes.
file(REMOVE_RECURSE ${DIR})
set(ENV{TESSERA_CACHE_DIR} ${DIR})

function(probe expect)
  execute_process(COMMAND ${PROBE} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "${expect}")
    message(FATAL_ERROR "cache_probe: expected '${expect}', got rc=${rc} '${out}' ${err}")
  endif()
  message(STATUS "ok: ${out}")
endfunction()

probe("compiles=1 disk_hits=0 disk_corrupt=0")   # cold: compiles and stores
probe("compiles=0 disk_hits=1 disk_corrupt=0")   # a new process hits the disk cache

# Corrupt every cached cubin (flip its bytes): the next process must detect, drop and recompile.
file(GLOB_RECURSE cubins ${DIR}/*cubin*)
list(FILTER cubins EXCLUDE REGEX "\\.json$")
if(NOT cubins)
  message(FATAL_ERROR "no cubin found under ${DIR}")
endif()
foreach(f ${cubins})
  file(WRITE ${f} "this is not a cubin")
endforeach()
probe("compiles=1 disk_hits=0 disk_corrupt=1")
probe("compiles=0 disk_hits=1 disk_corrupt=0")   # and the rewritten entry is good

# Two processes compiling the same kernel at once into an empty cache both succeed.
file(REMOVE_RECURSE ${DIR})
execute_process(
  COMMAND sh -c "\"$0\" & a=$!; \"$0\" & b=$!; wait $a; ra=$?; wait $b; rb=$?; test $ra -eq 0 && test $rb -eq 0" ${PROBE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "concurrent cache_probe runs failed: ${rc} ${out} ${err}")
endif()
message(STATUS "concurrent: ${out}")
probe("compiles=0 disk_hits=1 disk_corrupt=0")
