# How tessera's targets link LLVM and MLIR. By default they link the shared libMLIR.so and
# libLLVM.so that Debian ships (fast links while developing); with TESSERA_STATIC_LLVM=ON they link
# the static component libraries instead, so a binary runs on a machine without LLVM (the GPU box).
include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
separate_arguments(TESSERA_LLVM_DEFINITIONS NATIVE_COMMAND "${LLVM_DEFINITIONS}")

# tessera_link_mlir(<target> <PRIVATE|PUBLIC> MLIR_LIBS... LLVM_COMPONENTS comps...)
function(tessera_link_mlir target scope)
  cmake_parse_arguments(ARG "" "" "MLIR_LIBS;LLVM_COMPONENTS" ${ARGN})
  target_compile_definitions(${target} ${scope} ${TESSERA_LLVM_DEFINITIONS})
  if(TESSERA_STATIC_LLVM)
    llvm_map_components_to_libnames(llvm_libs ${ARG_LLVM_COMPONENTS})
    target_link_libraries(${target} ${scope} ${ARG_MLIR_LIBS} ${llvm_libs})
  else()
    if(ARG_MLIR_LIBS)
      target_link_libraries(${target} ${scope} MLIR)
    endif()
    target_link_libraries(${target} ${scope} LLVM)
  endif()
endfunction()
