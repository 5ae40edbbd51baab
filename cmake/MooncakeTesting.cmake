include(GoogleTest)

# launch/test runs ctest in parallel (--parallel 4 on 2 cores: most mpi tests wait on deadlines
# and time scales). What a test needs of the machine is said where it is registered:
#   RUN_SERIAL TRUE      nothing runs beside it: a failure timeout or an RPC deadline of about
#                        1 s that a neighbour's CPU can push a live rank past (the fault tests,
#                        the stalled-peer and deadline tests), and the live-against-simulated
#                        run, whose time scale of 8 multiplies a neighbour's delay. A test that
#                        runs a job but checks something else does not run alone: it passes
#                        --cluster.failure_timeout 10s (docs/RELIABILITY.md, "Three tests on the
#                        default 1 s failure timeout");
#   RESOURCE_LOCK live_timing
#                        one at a time among the live runs whose figures come from wall-clock
#                        sleeps compared with a model (live vs simulated, the conductor's live
#                        decisions, overload): other tests may run beside them, not each other;
#   PROCESSORS 1         (the default) a fuzz target keeps one core busy, an mpi test mostly waits;
#   COST <seconds>       the long ones start first, so the run does not end on a lone long test.
# Every entry over 30 s says why where it is registered.

# mooncake_unit_test(NAME SOURCES a.cc b.cc LIBS lib...): a GoogleTest binary whose tests are
# registered one CTest entry each, labelled "unit", each with a TIMEOUT so nothing can hang CI.
# COST (seconds) orders a slow binary's tests first under ctest --parallel. LABEL gpu: tests that
# need a GPU; each GTEST_SKIPs with the reason where there is none, which CTest reports as skipped
# (gtest_discover_tests matches "[  SKIPPED ]"), never as passed. SERIAL: every test of the binary
# runs alone (RUN_SERIAL, above), for in-process jobs with a failure timeout of about a second.
function(mooncake_unit_test name)
  cmake_parse_arguments(ARG "SERIAL" "TIMEOUT;COST;LABEL" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 60)
  endif()
  if(NOT ARG_LABEL)
    set(ARG_LABEL unit)
  endif()
  if(NOT ARG_COST)
    set(ARG_COST 0)
  endif()
  set(_serial "")
  if(ARG_SERIAL)
    set(_serial RUN_SERIAL TRUE)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${ARG_TIMEOUT} COST ${ARG_COST}
                                  ${_serial})
endfunction()

# mooncake_mpi_test(NAME NP n TLS "posix,self" [EXPECT regex] COMMAND exe args...): runs the
# command under a real mpirun with n ranks, with UCX pinned to TLS. Label "mpi"; TIMEOUT bounds a
# hung job. With EXPECT, the test passes only when mpirun exits 0 AND its output matches the
# extended regex (newlines are read as spaces).
set(MOONCAKE_MPIRUN_FLAGS --oversubscribe --allow-run-as-root --bind-to none
    --mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
function(mooncake_mpi_test name)
  cmake_parse_arguments(ARG "" "NP;TLS;TIMEOUT;EXPECT" "COMMAND" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  set(_prefix "")
  if(ARG_EXPECT)
    set(_prefix ${PROJECT_SOURCE_DIR}/cmake/expect_output.sh ${ARG_EXPECT})
  endif()
  add_test(NAME ${name}
           COMMAND ${_prefix} ${MPIEXEC_EXECUTABLE} ${MOONCAKE_MPIRUN_FLAGS} -x UCX_TLS=${ARG_TLS}
                   -x UCX_WARN_UNUSED_ENV_VARS=n -np ${ARG_NP} ${ARG_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT ${ARG_TIMEOUT}
                       ENVIRONMENT "OMPI_MCA_rmaps_base_oversubscribe=1")
endfunction()
