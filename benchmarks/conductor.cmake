# The conductor at scale (issue 19): conductor_bench replays a trace's scheduler calls with the
# full evaluation and the pruned search; conductor_bench.sh runs it pinned to one core.
add_executable(conductor_bench ${CMAKE_CURRENT_LIST_DIR}/conductor_bench.cc)
target_link_libraries(conductor_bench PRIVATE mooncake_eval mooncake_sim mooncake_conductor
                      Boost::program_options fmt::fmt)
set_target_properties(conductor_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                                 ${PROJECT_BINARY_DIR}/benchmarks)
