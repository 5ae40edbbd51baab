#!/usr/bin/env python3
"""The build states the graph: every src/ library links exactly the libraries it includes.

Reads each src/**/CMakeLists.txt for its add_library and target_link_libraries (mooncake_*
names only). A file belongs to the library that compiles it (a header: the library that compiles
its .cc), else to the first library of its nearest folder that defines one. Then it checks each
`#include "folder/header.h"`:

  * including a header of another library that this library does not link is an error;
  * linking a mooncake library none of whose headers this library includes is an error too;
  * a library must export ${PROJECT_SOURCE_DIR}/src and no other include root (clang-format
    run on a CMakeLists.txt once turned it into "${PROJECT_SOURCE_DIR} / src": -I/ and src);
    an installed library writes it $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>.

It also holds the layer order and the system-header rules (LAYERS and SYSTEM_HEADERS below):

  * a library links only libraries of its own src/ folder, or of a folder in a lower layer; a
    src/ folder missing from LAYERS is an error (say where a new library sits);
  * <mpi.h> is included only under cluster/mpi/, UCX's headers only under transport/ucx, HDF5's
    only under store/hdf5, CUDA's, cuBLAS's and NCCL's only under gpu/ and engine/cuda/ (the
    CUDA transformer), cpp-httplib only under http.

And beside src/, in tests/ and benchmarks/ (when the tree has them):

  * no <mpi.h>: MPI reaches them only through cluster/mpi/mpi_session.h;
  * no CUDA, cuBLAS or NCCL header: they test and measure GPUs through gpu/gpu.h and
    engine/cuda/cuda_kv_compute.h, which build without CUDA too;
  * no mooncake_app: only app's own tests (APP_TESTS) link it; the others link the libraries
    below it (the bootstrap is in cluster).

A tree with none of the LAYERS folders (a test fixture) is checked for links and includes only.

Usage: tools/check_includes.py [SRC_DIR]   (default: src next to this script's folder)
Exit status: 0 when the graph holds, 1 with one line per problem, 2 for a bad SRC_DIR.
"""
import pathlib
import re
import sys

ADD_LIBRARY = re.compile(r"add_library\(\s*(mooncake_\w+)([^)]*)\)", re.S)
LINKS = re.compile(r"target_link_libraries\(\s*(mooncake_\w+)([^)]*)\)", re.S)
INCLUDE_DIRS = re.compile(r"target_include_directories\(\s*(mooncake_\w+)([^)]*)\)", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE_SUFFIXES = {".h", ".cc", ".cu"}


# The layer of each src/ folder: a library may link its own folder's libraries and those of lower
# layers, never a higher or an equal other one (except where this table puts them side by side:
# engine and conductor, which the scheduler needs, are ordered inside layer 2 by LAYER_ORDER).
LAYERS = {
    "common": 0,
    "cluster": 1, "transport": 1, "gpu": 1, "http": 1, "trace": 1, "model": 1,
    "store": 2, "engine": 2, "conductor": 2,
    "serve": 3, "client": 3, "p2p": 3, "sim": 3, "eval": 3,
    "app": 4,
}
# Links between folders of the same layer that are allowed, (from, to).
# cluster's bootstrap exchanges each rank's transport address and registered regions.
SAME_LAYER = {("conductor", "engine"), ("eval", "sim"), ("engine", "model"), ("transport", "gpu"),
              ("cluster", "transport")}
CUDA_HEADER = re.compile(r"(cuda\w*\.h|cuda/|nccl\.h|cublas\w*\.h)")
# System headers and the folders (path prefixes under src/) allowed to include them.
SYSTEM_HEADERS = [
    (re.compile(r"mpi\.h$"), ("cluster/mpi/",)),
    (re.compile(r"(ucp|ucs|uct)/"), ("transport/ucx/",)),
    (re.compile(r"(hdf5\.h|H5\w*\.h)$"), ("store/hdf5/",)),
    (CUDA_HEADER, ("gpu/", "engine/cuda/")),
    (re.compile(r"httplib\.h$"), ("http/",)),
]
SYSTEM_INCLUDE = re.compile(r"^\s*#\s*include\s+<([^>]+)>", re.M)
# Folders beside src/ that build tests and tools, and where app's own tests are: they alone may
# link mooncake_app (the tests of its option parser and commands, and the fuzzer of that parser).
OUTSIDE_SRC = ("tests", "benchmarks")
APP_TESTS = {"tests/app/CMakeLists.txt", "tests/fuzz/CMakeLists.txt"}
APP_LINK = re.compile(r"\bmooncake_app\b")
FIXTURES = "tests/graph/"  # this check's own fixture trees, wrong on purpose


def outside_src_problems(root):
    """<mpi.h>, a CUDA header or a link of mooncake_app in tests/ and benchmarks/ (beside src/)."""
    problems = []
    for top in OUTSIDE_SRC:
        for f in sorted((root / top).rglob("*")):
            rel = f.relative_to(root).as_posix()
            if rel.startswith(FIXTURES):
                continue
            if f.suffix in SOURCE_SUFFIXES:
                text = f.read_text(errors="replace")
                for m in SYSTEM_INCLUDE.finditer(text):
                    if re.search(r"(^|/)mpi\.h$", m.group(1)):
                        line_no = text.count("\n", 0, m.start()) + 1
                        problems.append(f"{rel}:{line_no}: includes <{m.group(1)}>, allowed only "
                                        "under src/cluster/mpi/ (use cluster/mpi/mpi_session.h)")
                    if CUDA_HEADER.search(m.group(1)):
                        line_no = text.count("\n", 0, m.start()) + 1
                        problems.append(f"{rel}:{line_no}: includes <{m.group(1)}>, allowed only "
                                        "under src/gpu/ and src/engine/cuda/ (use gpu/gpu.h or "
                                        "engine/cuda/cuda_kv_compute.h)")
            elif (f.name == "CMakeLists.txt" or f.suffix == ".cmake") and rel not in APP_TESTS:
                text = re.sub(r"#.*", "", f.read_text(errors="replace"))
                for m in APP_LINK.finditer(text):
                    line_no = text.count("\n", 0, m.start()) + 1
                    problems.append(f"{rel}:{line_no}: names mooncake_app; tests and benchmarks "
                                    "link the libraries below it (only app's own tests may)")
    return problems


def layer_problems(src, folder_lib, links):
    """Links that point up or sideways, folders missing from LAYERS, system headers out of place."""
    folders = {p.name for p in src.iterdir() if p.is_dir()}
    if not folders & set(LAYERS):
        return []  # a fixture tree: no layers to hold
    problems = [f"src/{f}: not in tools/check_includes.py LAYERS (say which layer it is in)"
                for f in sorted(folders - set(LAYERS))
                if any(k == f or k.startswith(f + "/") for k in folder_lib)]
    top = {}
    for key, lib in folder_lib.items():
        if not key.startswith("file:"):
            top.setdefault(lib, key.split("/")[0])
    for lib, deps in sorted(links.items()):
        mine = top.get(lib)
        for dep in sorted(deps):
            theirs = top.get(dep)
            if mine not in LAYERS or theirs not in LAYERS or mine == theirs:
                continue
            if LAYERS[theirs] < LAYERS[mine] or (mine, theirs) in SAME_LAYER:
                continue
            problems.append(f"{lib} (src/{mine}, layer {LAYERS[mine]}) links {dep} (src/{theirs}, "
                            f"layer {LAYERS[theirs]}): dependencies point downward")
    for f in sorted(p for p in src.rglob("*") if p.suffix in SOURCE_SUFFIXES):
        rel = f.relative_to(src).as_posix()
        text = f.read_text(errors="replace")
        for m in SYSTEM_INCLUDE.finditer(text):
            for pattern, allowed in SYSTEM_HEADERS:
                if pattern.search(m.group(1)) and not rel.startswith(allowed):
                    line_no = text.count("\n", 0, m.start()) + 1
                    problems.append(f"src/{rel}:{line_no}: includes <{m.group(1)}>, allowed only "
                                    f"under {', '.join('src/' + a for a in allowed)}")
    return problems


def libraries(src):
    """{folder or source stem (relative to src): library} and {library: linked libraries}."""
    folder_lib, links = {}, {}
    for cmake in sorted(src.rglob("CMakeLists.txt")):
        text = re.sub(r"#.*", "", cmake.read_text())
        folder = cmake.parent.relative_to(src).as_posix()
        for name, sources in ADD_LIBRARY.findall(text):
            folder_lib.setdefault(folder, name)  # the first one owns the folder's other files
            links.setdefault(name, set())
            for source in re.findall(r"[\w/.-]+\.(?:cc|cu)\b", sources):
                stem = (cmake.parent / source).relative_to(src).with_suffix("").as_posix()
                folder_lib["file:" + stem] = name
        for name, deps in LINKS.findall(text):
            links.setdefault(name, set()).update(re.findall(r"\bmooncake_\w+", deps))
    return folder_lib, links


def owner(path, folder_lib):
    """The library compiling the file (or its .cc), else of its nearest folder, or None."""
    lib = folder_lib.get("file:" + path.with_suffix("").as_posix())
    if lib:
        return lib
    parts = path.parent.parts
    for n in range(len(parts), 0, -1):
        lib = folder_lib.get("/".join(parts[:n]))
        if lib:
            return lib
    return None


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__ + "\nusage: check_includes.py [SRC_DIR]   (default: the checkout's src/)")
        return 0
    here = pathlib.Path(__file__).resolve().parent
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else here.parent / "src").resolve()
    if not src.is_dir():
        print(f"check_includes: {src} is not a folder", file=sys.stderr)
        return 2
    folder_lib, links = libraries(src)
    problems, used = [], {lib: set() for lib in links}
    for cmake in sorted(src.rglob("CMakeLists.txt")):
        text = re.sub(r"#.*", "", cmake.read_text())
        for name, dirs in INCLUDE_DIRS.findall(text):
            roots = dirs.split()[1:]  # after PUBLIC / PRIVATE / INTERFACE
            # An installed library (mooncake_client) states the same root for its build tree.
            if roots not in (["${PROJECT_SOURCE_DIR}/src"],
                             ["$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>"]):
                problems.append(f"{cmake.relative_to(src.parent)}: {name} exports include "
                                f"roots {roots}; only ${{PROJECT_SOURCE_DIR}}/src is allowed")
    for f in sorted(p for p in src.rglob("*") if p.suffix in SOURCE_SUFFIXES):
        rel = f.relative_to(src)
        lib = owner(rel, folder_lib)
        if lib is None:
            continue  # not part of a library (an executable's main)
        text = f.read_text(errors="replace")
        for line_no, inc in ((text.count("\n", 0, m.start()) + 1, m.group(1))
                             for m in INCLUDE.finditer(text)):
            target = src / inc
            if not target.is_file():
                continue  # not a src/ header (a generated or third-party one)
            other = owner(pathlib.Path(inc), folder_lib)
            if other is None or other == lib:
                continue
            used[lib].add(other)
            if other not in links.get(lib, set()):
                problems.append(f"src/{rel}:{line_no}: includes \"{inc}\" of {other}, "
                                f"but {lib} does not link {other}")
    for lib, deps in sorted(links.items()):
        for dep in sorted(deps - used.get(lib, set())):
            if dep in links:  # only our own libraries: system ones are not headers here
                problems.append(f"{lib} links {dep} but includes none of its headers")
    problems += layer_problems(src, folder_lib, links)
    problems += outside_src_problems(src.parent)
    for p in problems:
        print(p)
    print(f"check_includes: {len(links)} libraries, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
