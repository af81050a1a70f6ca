# Install the library, headers and the exported target ringmm::ringmm for find_package(ringmm).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS ringmm EXPORT ringmmTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/ringmm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN "*.in" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/include/ringmm/config.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ringmm)
if(TARGET ringmm-cli)
  install(TARGETS ringmm-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT ringmmTargets NAMESPACE ringmm:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringmm)

configure_package_config_file(cmake/ringmmConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/ringmmConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringmm)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ringmmConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ringmmConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/ringmmConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringmm)
