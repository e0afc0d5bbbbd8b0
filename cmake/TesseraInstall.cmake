# `cmake --install` puts libtessera, the public headers and a CMake package config in the prefix;
# consumers write find_package(tessera CONFIG) and link tessera::tessera.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(NOT TESSERA_STATIC_LLVM)
  # libtessera loads Debian's libMLIR/libLLVM from their own directory.
  set_target_properties(tessera PROPERTIES INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
endif()

install(TARGETS tessera tessera_headers EXPORT tesseraTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/tessera DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT tesseraTargets NAMESPACE tessera:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/tesseraConfig.cmake
  "include(\${CMAKE_CURRENT_LIST_DIR}/tesseraTargets.cmake)\n")
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tesseraConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tesseraConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/tesseraConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)
