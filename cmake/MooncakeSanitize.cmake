# MOONCAKE_SANITIZE: a comma list of sanitizers for every target of the build, e.g.
#   cmake -S . -B build-asan -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 \
#         -DMOONCAKE_SANITIZE=address,undefined -DMOONCAKE_WITH_CUDA=OFF
# Empty (the default) builds without. Any report stops the process (-fno-sanitize-recover=all),
# so a CTest entry fails on the first one; the run-time options are in launch/lib-setup.sh
# (mooncake_sanitizer_env) and docs/RELIABILITY.md.
set(MOONCAKE_SANITIZE "" CACHE STRING
    "Sanitizers for every target, comma separated: address, undefined, leak, thread")

if(MOONCAKE_SANITIZE)
  string(REPLACE "," ";" _sanitizers "${MOONCAKE_SANITIZE}")
  foreach(_s IN LISTS _sanitizers)
    if(NOT _s MATCHES "^(address|undefined|leak|thread)$")
      message(FATAL_ERROR "MOONCAKE_SANITIZE: unknown sanitizer '${_s}' in "
                          "'${MOONCAKE_SANITIZE}' (known: address, undefined, leak, thread)")
    endif()
  endforeach()
  if("thread" IN_LIST _sanitizers AND ("address" IN_LIST _sanitizers OR "leak" IN_LIST _sanitizers))
    message(FATAL_ERROR "MOONCAKE_SANITIZE: thread cannot be combined with address or leak "
                        "(the runtimes exclude each other); use two builds")
  endif()
  if(MOONCAKE_HAVE_CUDA)
    message(FATAL_ERROR "MOONCAKE_SANITIZE needs -DMOONCAKE_WITH_CUDA=OFF (nvcc does not take "
                        "the sanitizer flags, and the CUDA runtime is not instrumented)")
  endif()
  string(REPLACE ";" "," _list "${_sanitizers}")
  add_compile_options(-fsanitize=${_list} -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${_list} -fno-sanitize-recover=all)
  message(STATUS "Sanitizers: ${_list}")
endif()
