# Transfer engine benchmark (issue 3). transfer_vs_ucx_perftest.sh runs it beside ucx_perftest.
add_library(mooncake_transfer_bench_setup STATIC ${CMAKE_CURRENT_LIST_DIR}/transfer_bench_setup.cc)
target_include_directories(mooncake_transfer_bench_setup PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(mooncake_transfer_bench_setup PUBLIC mooncake_transport_factory mooncake_transport
                      mooncake_cluster)

add_executable(transfer_bench ${CMAKE_CURRENT_LIST_DIR}/transfer_bench.cc
               ${CMAKE_CURRENT_LIST_DIR}/transfer_bench_options.cc
               ${CMAKE_CURRENT_LIST_DIR}/transfer_bench_run.cc)
target_link_libraries(transfer_bench PRIVATE mooncake_transfer_bench_setup mooncake_cluster_mpi
                      Boost::program_options)
set_target_properties(transfer_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
