# The runtime and the compiler are linked once per process, into libtessera (src/CMakeLists.txt):
# a test, tool or benchmark that linked their object libraries as well would hold a second copy of
# the runtime's state (the driver, the caches, the streams) beside libtessera's. So, once every
# directory has been configured, no target but libtessera may link tessera_runtime or
# tessera_compiler directly (an object library or an interface library may: through them only the
# usage requirements pass on, not the objects).
# Called through cmake_language(DEFER) from src/CMakeLists.txt.
function(_tessera_targets_under dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _tessera_targets_under(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(tessera_check_linked_once)
  _tessera_targets_under(${PROJECT_SOURCE_DIR} targets)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(t STREQUAL "tessera" OR NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|STATIC_LIBRARY|MODULE_LIBRARY)$")
      continue()
    endif()
    get_target_property(libs ${t} LINK_LIBRARIES)
    foreach(lib IN ITEMS tessera_runtime tessera_compiler)
      if(libs AND lib IN_LIST libs)
        message(FATAL_ERROR "${t} links ${lib}, which only libtessera may link (cmake/TesseraLayers.cmake); "
                            "link tessera::tessera, and tessera_internals for the internal headers")
      endif()
    endforeach()
  endforeach()
endfunction()
