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
    for p in problems:
        print(p)
    print(f"check_includes: {len(links)} libraries, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
