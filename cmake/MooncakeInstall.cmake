# `cmake --install build --prefix P`: mooncake as HPC sites install software (docs/CLIENT.md,
# "Installing"). P/bin holds mooncake and launch/mooncake-mpirun; P/lib libmooncake_client.so,
# its CMake package (find_package(mooncake) -> mooncake::client) and the Python module (under
# lib/python3/dist-packages); P/include/mooncake the client's headers; P/share/mooncake the
# configs/ presets, slurm/ scripts, tools/plot_run.py, which the installed binary finds beside
# itself (common/data_dir.h), whatever the working directory, and launch/lib-layout.sh, which
# the installed mooncake-mpirun finds there.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MOONCAKE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/mooncake)
set(MOONCAKE_INSTALL_PYTHONDIR ${CMAKE_INSTALL_LIBDIR}/python3/dist-packages)

set_target_properties(mooncake PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
install(TARGETS mooncake RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS mooncake_client EXPORT mooncakeTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mooncake)
install(FILES src/common/status.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mooncake/common)
install(FILES src/client/client.h src/client/mooncake_client.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mooncake/client)
install(EXPORT mooncakeTargets NAMESPACE mooncake:: DESTINATION ${MOONCAKE_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/mooncakeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/mooncakeConfig.cmake
                              INSTALL_DESTINATION ${MOONCAKE_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mooncakeConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mooncakeConfig.cmake
              ${PROJECT_BINARY_DIR}/mooncakeConfigVersion.cmake
        DESTINATION ${MOONCAKE_INSTALL_CMAKEDIR})
if(TARGET py_mooncake_store)
  set_target_properties(py_mooncake_store PROPERTIES INSTALL_RPATH "$ORIGIN/../..")
  install(TARGETS py_mooncake_store LIBRARY DESTINATION ${MOONCAKE_INSTALL_PYTHONDIR})
endif()
install(DIRECTORY configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/mooncake/configs)
install(PROGRAMS tools/plot_run.py DESTINATION ${CMAKE_INSTALL_DATADIR}/mooncake/tools)
install(PROGRAMS launch/mooncake-mpirun DESTINATION ${CMAKE_INSTALL_BINDIR})
# mooncake-mpirun's helpers are sourced, not run: beside the data, where the installed wrapper
# (and a slurm script with MOONCAKE_HOME=P/share/mooncake) looks for launch/lib-layout.sh.
install(FILES launch/lib-layout.sh DESTINATION ${CMAKE_INSTALL_DATADIR}/mooncake/launch)
install(FILES slurm/mooncake.slurm slurm/eval-sweep.slurm slurm/store.slurm slurm/hetjob.slurm
              slurm/p2p.slurm
        DESTINATION ${CMAKE_INSTALL_DATADIR}/mooncake/slurm)
