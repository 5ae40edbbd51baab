# Store benchmarks (issue 4 and 8). hdf5_vs_fio.sh runs store_hdf5_bench beside fio;
# store_vs_baselines.sh runs store_bench beside its raw-read mode and redis-benchmark.
add_executable(store_hdf5_bench ${CMAKE_CURRENT_LIST_DIR}/store_hdf5_bench.cc)
target_link_libraries(store_hdf5_bench PRIVATE mooncake_store_hdf5)

# The store over MPI + UCX (shared with tests/store_mpi).
add_library(mooncake_store_bench_setup STATIC ${CMAKE_CURRENT_LIST_DIR}/store_bench_setup.cc)
target_include_directories(mooncake_store_bench_setup PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(mooncake_store_bench_setup PUBLIC mooncake_store_net
                      mooncake_cluster mooncake_transport_factory mooncake_transport)

add_executable(store_bench ${CMAKE_CURRENT_LIST_DIR}/store_bench.cc
               ${CMAKE_CURRENT_LIST_DIR}/store_bench_meta.cc
               ${CMAKE_CURRENT_LIST_DIR}/store_bench_options.cc
               ${CMAKE_CURRENT_LIST_DIR}/store_bench_ssd.cc)
target_link_libraries(store_bench PRIVATE mooncake_store_bench_setup mooncake_cluster_mpi mooncake_store_ssd
                      mooncake_store_hdf5 Boost::program_options)
set_target_properties(store_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
