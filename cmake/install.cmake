# `cmake --install BUILD --prefix P`: librlx (shared and static), rlx.h, the
# CLI, a CMake package (find_package(rlx): rlx::rlx, rlx::rlx_static) and
# rlx.pc (pkg-config rlx). docs/design.md, "Installed layout"; checked by
# scripts/install_check.sh.
include(CMakePackageConfigHelpers)
set(RLX_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/rlx)

install(TARGETS rlx_shared EXPORT rlx_targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS rlx_static EXPORT rlx_static_targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS rlx RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/rlx.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Two export sets, so that rlxConfig.cmake can define rlx::rlx alone where
# cJSON, which only the static library needs, is not installed.
install(EXPORT rlx_targets NAMESPACE rlx:: FILE rlxTargets.cmake
        DESTINATION ${RLX_INSTALL_CMAKEDIR})
install(EXPORT rlx_static_targets NAMESPACE rlx:: FILE rlxStaticTargets.cmake
        DESTINATION ${RLX_INSTALL_CMAKEDIR})
get_filename_component(RLX_CJSON_DIR "${CJSON_LIBRARY}" DIRECTORY)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/rlxConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/rlxConfig.cmake
                              INSTALL_DESTINATION ${RLX_INSTALL_CMAKEDIR})
# The soname changes with the major version only, and so does compatibility.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rlxConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rlxConfig.cmake ${PROJECT_BINARY_DIR}/rlxConfigVersion.cmake
        DESTINATION ${RLX_INSTALL_CMAKEDIR})

# rlx.pc. Its paths are relative to the file itself (${pcfiledir}), so the
# prefix given at install time is the one it names, and the installed tree
# can be moved; with an absolute CMAKE_INSTALL_LIBDIR or INCLUDEDIR they are
# the absolute directories. Libs.private is what librlx.a needs: cJSON (with
# its directory when the linker does not search it already), libm, and the
# thread library where it is not part of libc.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(RLX_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(RLX_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(RLX_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH rlx_pc_up "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" rlx_pc_up "${rlx_pc_up}")
  set(RLX_PC_PREFIX "\${pcfiledir}/${rlx_pc_up}")
  set(RLX_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(RLX_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
set(RLX_PC_LIBS_PRIVATE "-lcjson")
if(NOT RLX_CJSON_DIR IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
  set(RLX_PC_LIBS_PRIVATE "-L${RLX_CJSON_DIR} -lcjson")
endif()
string(STRIP "${RLX_PC_LIBS_PRIVATE} -lm ${CMAKE_THREAD_LIBS_INIT}" RLX_PC_LIBS_PRIVATE)
configure_file(${CMAKE_CURRENT_LIST_DIR}/rlx.pc.in ${PROJECT_BINARY_DIR}/rlx.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/rlx.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
