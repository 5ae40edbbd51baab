# The store client of processes outside the job (issue 14): client_vs_baselines.sh runs
# client_bench (C++) and client_bench.py (the Python module, and redis-py) against one store job,
# and store_bench (the in-job client) beside them.
add_executable(client_bench ${CMAKE_CURRENT_LIST_DIR}/client_bench.cc)
target_link_libraries(client_bench PRIVATE mooncake_client mooncake_common Boost::program_options)
set_target_properties(client_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
