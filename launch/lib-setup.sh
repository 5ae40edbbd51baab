# Shared by launch/quickstart and launch/test: install what is missing, configure, build.
# Sourced, not run. Idempotent: a second run installs nothing and rebuilds only what changed.

MOONCAKE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MOONCAKE_BUILD=${MOONCAKE_BUILD:-$MOONCAKE_ROOT/build}

# Debian 12 packages the build and the job need.
MOONCAKE_BUILD_PACKAGES=(
  cmake g++ make ninja-build pkg-config
  libopenmpi-dev openmpi-bin
  libucx-dev ucx-utils
  libhdf5-dev hdf5-tools
  libboost-program-options-dev
  googletest libgtest-dev libgmock-dev
  nlohmann-json3-dev libxxhash-dev libfmt-dev libcpp-httplib-dev
  libblis-dev
  python3-matplotlib python3-h5py
  python3-dev pybind11-dev
)
# What the full test suite and the benchmarks' baselines need in addition.
MOONCAKE_TEST_PACKAGES=(
  slurm-wlm slurmctld slurmd slurm-client munge
  redis-server redis-tools fio clang-format prometheus curl
  clang libclang-rt-14-dev
  python3-pytest python3-numpy python3-redis python3-hiredis
)

mooncake_log() { printf '[mooncake] %s\n' "$*"; }

# mooncake_install PKG...: installs the packages that are not installed yet, saying which.
mooncake_install() {
  local missing=()
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    mooncake_log "all ${#@} required Debian packages are installed"
    return 0
  fi
  mooncake_log "installing ${#missing[@]} Debian packages: ${missing[*]}"
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q >/dev/null
  # Slurm's and munge's maintainer scripts try to start daemons; there is no init system in a
  # container, and the tests start their own daemons, so a failing start must not fail the install.
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/mooncake-apt.log 2>&1 || {
    tail -20 /tmp/mooncake-apt.log
    mooncake_log "apt-get install failed (full log: /tmp/mooncake-apt.log)"
    return 1
  }
}

# mooncake_build [TARGET...]: configures (once) and builds into $MOONCAKE_BUILD (all targets
# unless some are named).
mooncake_build() {
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  mkdir -p "$MOONCAKE_BUILD"
  if [[ ! -f $MOONCAKE_BUILD/CMakeCache.txt ]]; then
    mooncake_log "configuring into $MOONCAKE_BUILD"
    # Ninja when present (it keeps both cores busy through the link-heavy tail better than
    # make); ccache when present, never required (a warm cache only helps a rebuild).
    local generator=() launcher=()
    command -v ninja >/dev/null && generator=(-G Ninja)
    command -v ccache >/dev/null &&
      launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    # MOONCAKE_CMAKE_ARGS: extra configure arguments (launch/test's sanitizer build sets them).
    # shellcheck disable=SC2086
    cmake -S "$MOONCAKE_ROOT" -B "$MOONCAKE_BUILD" "${generator[@]}" "${launcher[@]}" \
      -DCMAKE_BUILD_TYPE="${MOONCAKE_BUILD_TYPE:-RelWithDebInfo}" \
      ${MOONCAKE_CMAKE_ARGS:-} >"$MOONCAKE_BUILD/configure.log" 2>&1 || {
      cat "$MOONCAKE_BUILD/configure.log"
      return 1
    }
  fi
  mooncake_log "building ($(nproc) jobs; log: $MOONCAKE_BUILD/build.log)"
  if ! cmake --build "$MOONCAKE_BUILD" -j"$(nproc)" "${targets[@]}" >"$MOONCAKE_BUILD/build.log" 2>&1; then
    grep -E -A3 "error|Error" "$MOONCAKE_BUILD/build.log" | head -60
    mooncake_log "build failed (full log: $MOONCAKE_BUILD/build.log)"
    return 1
  fi
  grep -E "warning:" "$MOONCAKE_BUILD/build.log" | sort -u | head -20 || true
  mooncake_log "built $MOONCAKE_BUILD/mooncake"
}

# Open MPI refuses root without these, and more ranks than cores without oversubscription.
mooncake_mpi_env() {
  if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  export OMPI_MCA_rmaps_base_oversubscribe=1
  export UCX_WARN_UNUSED_ENV_VARS=n
}

# The sanitizer build's run-time environment (launch/test's second half; docs/RELIABILITY.md).
# Any report ends the process with an error (halt_on_error), so the CTest entry fails.
mooncake_sanitizer_env() {
  local supp=$MOONCAKE_ROOT/tools/sanitizers/lsan.supp
  # intercept_tls_get_addr=0: LeakSanitizer (clang 14) otherwise records each thread's dynamic TLS
  # blocks from __tls_get_addr and scans them at exit, and with Open MPI and UCX threads it kept
  # an entry whose start was an offset (0x3f80), not an address: its tracer crashed in
  # ScanRangeForPointers ('Tracer caught signal 11'), rank exit 1, after a clean 5-rank run, every
  # time. Our thread_locals are static TLS, which the leak check still scans.
  export ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:detect_leaks=1:fast_unwind_on_malloc=0:detect_stack_use_after_return=0:strict_string_checks=1:intercept_tls_get_addr=0
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  export LSAN_OPTIONS=suppressions=$supp:print_suppressions=0
  # Open MPI 4.1 unloads its components at MPI_Finalize (it has no setting to keep them), so their
  # frames in a leak report read '<unknown module>'; the libmpi / libopen-pal frames under them
  # still match the suppressions.
  # UCX patches malloc/mmap to see memory being freed (its registration cache); ASan owns those
  # symbols. Without these the UCX memory hooks fight ASan's interceptors.
  export UCX_MEM_MALLOC_HOOKS=n UCX_MEM_MALLOC_RELOC=n UCX_MEM_EVENTS=n
}
