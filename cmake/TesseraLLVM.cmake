# How tessera's targets link LLVM and MLIR. By default they link the shared libMLIR.so and
# libLLVM.so that Debian ships (fast links while developing); with TESSERA_STATIC_LLVM=ON they link
# the static component libraries instead, so a binary runs on a machine without LLVM (the GPU box).
include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
separate_arguments(TESSERA_LLVM_DEFINITIONS NATIVE_COMMAND "${LLVM_DEFINITIONS}")

if(TESSERA_STATIC_LLVM)
  # Debian's static MLIR libraries name the LLVM shared library ("LLVM") in their link interface.
  # Replace it with LLVM's static component libraries so nothing loads libLLVM.so at run time.
  set(TESSERA_STATIC_LLVM_COMPONENTS
    Support Core Analysis TransformUtils ScalarOpts InstCombine IPO Passes Linker BitReader BitWriter
    IRReader AsmParser MC MCParser Target TargetParser CodeGen SelectionDAG AsmPrinter OrcJIT
    ExecutionEngine JITLink RuntimeDyld Object FrontendOpenMP
    NVPTXCodeGen NVPTXDesc NVPTXInfo X86CodeGen X86AsmParser X86Desc X86Info)
  llvm_map_components_to_libnames(TESSERA_STATIC_LLVM_LIBS ${TESSERA_STATIC_LLVM_COMPONENTS})
  foreach(t ${MLIR_EXPORTED_TARGETS})
    if(TARGET ${t})
      get_target_property(deps ${t} INTERFACE_LINK_LIBRARIES)
      if(deps AND "LLVM" IN_LIST deps)
        list(TRANSFORM deps REPLACE "^LLVM$" "${TESSERA_STATIC_LLVM_LIBS}")
        set_target_properties(${t} PROPERTIES INTERFACE_LINK_LIBRARIES "${deps}")
      endif()
    endif()
  endforeach()
endif()

# tessera_link_mlir(<target> <PRIVATE|PUBLIC> MLIR_LIBS... LLVM_COMPONENTS comps...)
function(tessera_link_mlir target scope)
  cmake_parse_arguments(ARG "" "" "MLIR_LIBS;LLVM_COMPONENTS" ${ARGN})
  target_compile_definitions(${target} ${scope} ${TESSERA_LLVM_DEFINITIONS})
  if(TESSERA_STATIC_LLVM)
    target_link_libraries(${target} ${scope} ${ARG_MLIR_LIBS} ${TESSERA_STATIC_LLVM_LIBS})
  else()
    if(ARG_MLIR_LIBS)
      target_link_libraries(${target} ${scope} MLIR)
    endif()
    target_link_libraries(${target} ${scope} LLVM)
  endif()
endfunction()
