# cli_stats_json.cmake: tessera-qwen3 --stats-json end to end on the CPU target (ctest
# qwen3.cli_stats_json). Runs the tiny synthetic model with --prompt-tokens 32 and 8 new tokens,
# then reads the JSON back and checks its fields against the run (32 prompt ids, the new tokens,
# positive times and rates, the target), and that an unwritable --stats-json path is an error
# naming the file (exit status 1). Variables: QWEN3 (the binary), TOKENIZER_DIR, OUT (the JSON
# file to write). The caller's TESSERA_* variables are dropped first.
execute_process(COMMAND ${CMAKE_COMMAND} -E environment OUTPUT_VARIABLE environment)
string(REGEX MATCHALL "(^|\n)TESSERA_[A-Za-z0-9_]*=" names "${environment}")
foreach(name IN LISTS names)
  string(REGEX REPLACE "[\n=]" "" name "${name}")
  unset(ENV{${name}})
endforeach()

file(REMOVE ${OUT})
get_filename_component(out_dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${out_dir})
execute_process(
  COMMAND ${QWEN3} --synthetic tiny --model ${TOKENIZER_DIR} --prompt-tokens 32 --max-new-tokens 8 --target cpu
          --stats-json ${OUT}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT err MATCHES "prefill: 32 tokens in")
  message(FATAL_ERROR "tessera-qwen3 --stats-json: rc=${rc}\n${out}\n${err}")
endif()
file(READ ${OUT} stats)

# field(<name> <expected regex>): the JSON member `name` must match the regex.
function(field name expect)
  string(JSON value ERROR_VARIABLE problem GET "${stats}" ${name})
  if(problem OR NOT value MATCHES "${expect}")
    message(FATAL_ERROR "${OUT}: field '${name}' is '${value}' (${problem}), expected '${expect}'\n${stats}")
  endif()
endfunction()
set(positive "^[0-9.e+-]+$")
field(shape "^tiny$")
field(target "^cpu$")
field(layers "^2$")
field(prompt_tokens "^32$")
field(stop "^(max_tokens|stop_token)$")
foreach(name weight_bytes load_s warm_up_s prefill_s prefill_tokens_per_s decode_s decode_tokens_per_s)
  field(${name} "${positive}")
  string(JSON value GET "${stats}" ${name})
  if(NOT value GREATER 0)
    message(FATAL_ERROR "${OUT}: field '${name}' is ${value}, expected more than 0")
  endif()
endforeach()
string(JSON prompt_ids LENGTH "${stats}" prompt_ids)
string(JSON tokens LENGTH "${stats}" tokens)
string(JSON new_tokens GET "${stats}" new_tokens)
string(JSON stop GET "${stats}" stop)
if(NOT prompt_ids EQUAL 32 OR NOT tokens EQUAL new_tokens OR (stop STREQUAL "max_tokens" AND NOT new_tokens EQUAL 8))
  message(FATAL_ERROR "${OUT}: ${prompt_ids} prompt ids (expected 32), ${tokens} tokens for new_tokens "
                      "${new_tokens} (expected 8 unless a stop token ended the run)\n${stats}")
endif()
message(STATUS "ok: ${stats}")

# An unwritable path: a clear error naming the file, exit status 1.
execute_process(
  COMMAND ${QWEN3} --synthetic tiny --model ${TOKENIZER_DIR} --prompt-tokens 4 --max-new-tokens 2 --target cpu
          --stats-json ${out_dir}/no-such-folder/stats.json
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT err MATCHES "no-such-folder/stats.json: cannot write the --stats-json file")
  message(FATAL_ERROR "an unwritable --stats-json path: rc=${rc}, expected 1 and a message naming it\n${err}")
endif()
message(STATUS "ok: ${err}")
