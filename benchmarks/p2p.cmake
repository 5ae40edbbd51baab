# P2P store vs MPI_Bcast (issue 15): p2p_vs_bcast.sh runs `mooncake p2p --in-memory` beside this
# MPI_Bcast of the same bytes and beside every rank reading the file itself.
add_executable(p2p_bcast_bench ${CMAKE_CURRENT_LIST_DIR}/p2p_bcast_bench.cc)
target_link_libraries(p2p_bcast_bench PRIVATE mooncake_cluster_mpi mooncake_common)
set_target_properties(p2p_bcast_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
