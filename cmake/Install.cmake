# Installs the library, its headers and a CMake package so that a user's project can find_package(ortdlpack).
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS ortdlpack EXPORT ortdlpackTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/ortdlpack DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT ortdlpackTargets NAMESPACE ortdlpack:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ortdlpack)
configure_package_config_file(cmake/ortdlpackConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/ortdlpackConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ortdlpack)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ortdlpackConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ortdlpackConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/ortdlpackConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ortdlpack)
