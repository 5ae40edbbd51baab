# The reference model's speed (issue 29): engine_bench measures one preset's prefill and decode
# beside BLIS's sgemm and memcpy bandwidth; engine_speed.sh runs it beside PyTorch eager.
add_executable(engine_bench ${CMAKE_CURRENT_LIST_DIR}/engine_bench.cc)
target_include_directories(engine_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(engine_bench PRIVATE mooncake_model mooncake::blis nlohmann_json::nlohmann_json)
set_target_properties(engine_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                              ${PROJECT_BINARY_DIR}/benchmarks)
