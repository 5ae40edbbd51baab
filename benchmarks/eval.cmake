# Simulator speed: eval_driver is `mooncake eval` as its own binary; eval_speed.sh times the
# whole conversation trace at one config point.
if(NOT TARGET mooncake_eval)
  add_subdirectory(${PROJECT_SOURCE_DIR}/src/app/eval ${PROJECT_BINARY_DIR}/src/app/eval)
endif()
add_executable(eval_driver ${CMAKE_CURRENT_LIST_DIR}/eval_driver.cc)
target_link_libraries(eval_driver PRIVATE mooncake_eval)
set_target_properties(eval_driver PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/benchmarks)
