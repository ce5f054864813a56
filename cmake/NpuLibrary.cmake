# npu_library(<target> <export name> SOURCES <file>... [PRIVATE_SRC])
#
# One static library of the stack, as every layer's CMakeLists.txt declares it: the target,
# its alias npu::<export name>, the public include/ directory (installed), src/ as a private
# include directory with PRIVATE_SRC, and its installation into the npuTargets export (so
# find_package(npu CONFIG) gives npu::<export name>). Links are declared by the caller with
# target_link_libraries.
function(npu_library target export_name)
  cmake_parse_arguments(L "PRIVATE_SRC" "" "SOURCES" ${ARGN})
  add_library(${target} STATIC ${L_SOURCES})
  add_library(npu::${export_name} ALIAS ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  if(L_PRIVATE_SRC)
    target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  endif()
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  install(TARGETS ${target} EXPORT npuTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()
