# TESSERA_SANITIZE: instruments tessera, its tests, tools, examples and benchmarks (scripts/test.sh
# --asan / --tsan, each in its own build directory):
#   address  AddressSanitizer and UndefinedBehaviorSanitizer (undefined behaviour aborts the test)
#   thread   ThreadSanitizer
# The flags go into CMAKE_CXX_FLAGS and the linker flags, so that the install test builds its
# consumer with them as well (an instrumented libtessera needs the sanitizer runtime loaded first).
# LLVM's and MLIR's shared libraries, the CUDA libraries and the JIT-compiled kernels are not
# instrumented: ASan checks no accesses inside them (it still checks every allocation they make
# through malloc/new, which it intercepts) and TSan sees neither their accesses nor their atomics.
set(TESSERA_SANITIZE "" CACHE STRING "Build with sanitizers: address (ASan + UBSan) or thread (TSan)")
if(TESSERA_SANITIZE STREQUAL "address")
  set(TESSERA_SANITIZER_FLAGS "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer")
elseif(TESSERA_SANITIZE STREQUAL "thread")
  set(TESSERA_SANITIZER_FLAGS "-fsanitize=thread -fno-omit-frame-pointer")
elseif(NOT TESSERA_SANITIZE STREQUAL "")
  message(FATAL_ERROR "TESSERA_SANITIZE must be address, thread or empty, not '${TESSERA_SANITIZE}'")
endif()
if(TESSERA_SANITIZER_FLAGS)
  string(APPEND CMAKE_CXX_FLAGS " ${TESSERA_SANITIZER_FLAGS}")
  string(APPEND CMAKE_EXE_LINKER_FLAGS " ${TESSERA_SANITIZER_FLAGS}")
  string(APPEND CMAKE_SHARED_LINKER_FLAGS " ${TESSERA_SANITIZER_FLAGS}")
  string(APPEND CMAKE_MODULE_LINKER_FLAGS " ${TESSERA_SANITIZER_FLAGS}")
endif()
