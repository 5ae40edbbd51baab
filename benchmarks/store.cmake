# Store benchmarks (issue 4 and 8). hdf5_vs_fio.sh runs store_hdf5_bench beside fio.
add_executable(store_hdf5_bench ${CMAKE_CURRENT_LIST_DIR}/store_hdf5_bench.cc)
target_link_libraries(store_hdf5_bench PRIVATE mooncake_store_hdf5)
