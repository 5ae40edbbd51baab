# Every external dependency is found here, once, and exposed as an imported target.
find_package(MPI REQUIRED COMPONENTS CXX)
find_package(ucx CONFIG)  # ucx::ucp ucx::uct ucx::ucs; without it the UCX backend is disabled
find_package(HDF5 REQUIRED COMPONENTS C)                 # serial HDF5 (libhdf5-dev)
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(GTest REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)  # libcpp-httplib-dev: src/http

# BLIS (libblis-dev) for the reference model's matmuls (src/model): its conventional gemm path
# computes every row of C the same way whatever the row count or the row's position (edge tiles
# go through the same micro-kernel), which OpenBLAS 0.3.21 does not; docs/MODEL.md has the
# measurement.
find_path(BLIS_INCLUDE_DIR blis.h PATH_SUFFIXES blis-openmp blis-pthread blis-serial blis)
find_library(BLIS_LIBRARY blis)
if(NOT BLIS_INCLUDE_DIR OR NOT BLIS_LIBRARY)
  message(FATAL_ERROR "BLIS not found (blis.h, libblis): install the Debian package libblis-dev")
endif()
if(NOT TARGET mooncake::blis)
  add_library(mooncake::blis UNKNOWN IMPORTED)
  set_target_properties(mooncake::blis PROPERTIES IMPORTED_LOCATION ${BLIS_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${BLIS_INCLUDE_DIR})
endif()

if(NOT TARGET mooncake::hdf5)
  add_library(mooncake::hdf5 INTERFACE IMPORTED)
  target_include_directories(mooncake::hdf5 INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
  target_link_libraries(mooncake::hdf5 INTERFACE ${HDF5_C_LIBRARIES} ${HDF5_LIBRARIES})
  target_compile_definitions(mooncake::hdf5 INTERFACE ${HDF5_DEFINITIONS})
endif()

# CUDA and NCCL are optional. AUTO builds the CUDA parts when nvcc is found. No GPU is needed to
# build: CMAKE_CUDA_ARCHITECTURES is explicit because "native" fails without a device.
set(MOONCAKE_HAVE_CUDA OFF)
if(NOT MOONCAKE_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT CMAKE_CUDA_ARCHITECTURES)
      # sm_80 code plus its PTX, which the driver JIT-compiles for newer GPUs; one architecture
      # keeps the build short. Pass -DCMAKE_CUDA_ARCHITECTURES="80;90" for native H100 code.
      set(CMAKE_CUDA_ARCHITECTURES 80)
    endif()
    # CMake 3.25 does not know nvcc's C++20 flag; the .cu files need only C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      add_library(mooncake::nccl UNKNOWN IMPORTED)
      set_target_properties(mooncake::nccl PROPERTIES IMPORTED_LOCATION ${NCCL_LIBRARY}
                            INTERFACE_INCLUDE_DIRECTORIES ${NCCL_INCLUDE_DIR})
      set(MOONCAKE_HAVE_CUDA ON)
    endif()
  endif()
  if(MOONCAKE_WITH_CUDA STREQUAL "ON" AND NOT MOONCAKE_HAVE_CUDA)
    message(FATAL_ERROR "MOONCAKE_WITH_CUDA=ON but nvcc or NCCL was not found under /usr/local/cuda")
  endif()
endif()
message(STATUS "mooncake: CUDA/NCCL parts ${MOONCAKE_HAVE_CUDA}")
