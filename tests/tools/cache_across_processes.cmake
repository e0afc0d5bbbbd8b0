# Runs cache_probe in fresh processes against one cache directory (DIR) and checks the counters:
# cold compile, warm disk hit, corrupted bytes recompiled, the entries of two kernels of one name
# swapped, bytes moved from one entry to the other with their checksum rewritten to match, then
# two concurrent cold processes, which must compile the kernel once between them (the compile
# lock). The caller's TESSERA_* variables are dropped first (TESSERA_DUMP_DIR, for one, makes
# every process compile).
execute_process(COMMAND ${CMAKE_COMMAND} -E environment OUTPUT_VARIABLE environment)
string(REGEX MATCHALL "(^|\n)TESSERA_[A-Za-z0-9_]*=" names "${environment}")
foreach(name IN LISTS names)
  string(REGEX REPLACE "[\n=]" "" name "${name}")
  unset(ENV{${name}})
endforeach()
file(REMOVE_RECURSE ${DIR})
set(ENV{TESSERA_CACHE_DIR} ${DIR})

# probe(<expected output regex> [other]): one cache_probe process.
function(probe expect)
  execute_process(COMMAND ${PROBE} ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "${expect}")
    message(FATAL_ERROR "cache_probe ${ARGN}: expected '${expect}', got rc=${rc} '${out}' ${err}")
  endif()
  message(STATUS "ok: ${ARGN} ${out}")
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

# The entry of another kernel of the same name beside it: A is the first kernel's, B the other's.
file(GLOB entries LIST_DIRECTORIES true ${DIR}/*)
probe("compiles=1 disk_hits=0 disk_corrupt=0" other)
file(GLOB both LIST_DIRECTORIES true ${DIR}/*)
list(REMOVE_ITEM both ${entries})
list(LENGTH entries n_a)
list(LENGTH both n_b)
if(NOT n_a EQUAL 1 OR NOT n_b EQUAL 1)
  message(FATAL_ERROR "expected one entry per kernel, got '${entries}' and '${both}'")
endif()
set(A ${entries})
set(B ${both})

# Swapped entries (directory A holds B's entry and B A's): both are dropped and recompiled.
file(RENAME ${A} ${DIR}/swap)
file(RENAME ${B} ${A})
file(RENAME ${DIR}/swap ${B})
probe("compiles=1 disk_hits=0 disk_corrupt=1")
probe("compiles=1 disk_hits=0 disk_corrupt=1" other)
probe("compiles=0 disk_hits=1 disk_corrupt=0")
probe("compiles=0 disk_hits=1 disk_corrupt=0" other)

# B's cubin copied into A, with A's record of it rewritten to match those bytes: to B's record
# (size and digest), then to their plain SHA-256. Either way A's cubin is dropped and recompiled.
foreach(rewrite record sha256)
  file(READ ${A}/metadata.json meta_a)
  if(rewrite STREQUAL "record")
    file(READ ${B}/metadata.json meta_b)
    string(JSON record GET "${meta_b}" files cubin)
  else()
    file(SHA256 ${B}/cubin sha)
    file(SIZE ${B}/cubin size)
    set(record "{\"size\": ${size}, \"sha256\": \"${sha}\"}")
  endif()
  string(JSON meta_a SET "${meta_a}" files cubin "${record}")
  file(WRITE ${A}/metadata.json "${meta_a}")
  file(COPY_FILE ${B}/cubin ${A}/cubin)
  probe("compiles=1 disk_hits=0 disk_corrupt=1")
  probe("compiles=0 disk_hits=1 disk_corrupt=0")
endforeach()
probe("compiles=0 disk_hits=1 disk_corrupt=0" other)

# Two processes compiling the same kernel at once into an empty cache: both succeed, and one
# compiles while the other waits for its compile lock and loads what it stored (or, started
# later, hits the disk cache): one compile between them.
file(REMOVE_RECURSE ${DIR})
set(OUT ${DIR}-concurrent)
file(REMOVE ${OUT}.1 ${OUT}.2)
execute_process(
  COMMAND sh -c "\"$0\" > \"$1.1\" & a=$!; \"$0\" > \"$1.2\" & b=$!; wait $a; ra=$?; wait $b; rb=$?; test $ra -eq 0 && test $rb -eq 0"
          ${PROBE} ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(READ ${OUT}.1 out1)
file(READ ${OUT}.2 out2)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "concurrent cache_probe runs failed: ${rc} ${out} ${err} '${out1}' '${out2}'")
endif()
set(compiles 0)
set(hits 0)
foreach(o "${out1}" "${out2}")
  if(NOT o MATCHES "compiles=([0-9]+) disk_hits=([0-9]+) disk_corrupt=0")
    message(FATAL_ERROR "concurrent cache_probe: unexpected output '${o}'")
  endif()
  math(EXPR compiles "${compiles} + ${CMAKE_MATCH_1}")
  math(EXPR hits "${hits} + ${CMAKE_MATCH_2}")
endforeach()
if(NOT compiles EQUAL 1 OR NOT hits EQUAL 1)
  message(FATAL_ERROR "concurrent cache_probe: ${compiles} compiles and ${hits} disk hits in all, expected 1 and 1: '${out1}' '${out2}'")
endif()
message(STATUS "concurrent: ${out1}${out2}")
probe("compiles=0 disk_hits=1 disk_corrupt=0")
