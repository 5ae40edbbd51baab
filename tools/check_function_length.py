#!/usr/bin/env python3
"""No function in src/ longer than MAX_LINES (80) lines: a long function is split by concept.

A function's length is counted from the line of its opening brace to the line of its closing
brace, both included (its signature and a constructor's initializer list are not counted). The
scan is a heuristic over the text, not a parser: comments, string and character literals are
blanked first; a brace opens a function when the text before it (back to the previous `;`, `{` or
`}`) ends in `)` followed only by qualifiers (const, noexcept, override, final, a trailing return
type) or by a constructor's initializer list, and does not start with a control keyword (if, for,
while, switch, catch). A lambda, a class or a control block inside a function counts as part of
that function. Files in src/**/*.{h,cc,cu}.

Usage: tools/check_function_length.py [SRC_DIR] [--max N] [--help]
  (default: src beside this folder, 80 lines)
Functions in PENDING (another change is rewriting them) are not reported.

Exit status: 0 when no function is longer, 1 with one line per function that is ("FILE:LINE:
NAME is N lines (at most 80)"), 2 for a bad SRC_DIR or --max.
"""
import pathlib
import re
import sys

MAX_LINES = 80
# Functions over the limit that another change is rewriting now: each is split when it lands
# (file relative to the scanned folder's parent, and the function's name). Keep it empty.
PENDING: set[tuple[str, str]] = set()
SUFFIXES = {".h", ".cc", ".cu"}
CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else)\b")
# What may follow a function's closing parenthesis before its body.
QUALIFIED_CLOSE = re.compile(
    r"\)\s*(const|noexcept(\([^)]*\))?|override|final|mutable|&|&&|\s)*(->\s*[\w:<>,\s*&]+)?\s*$")
# A constructor's initializer list: ") : member_(...), other_{...}" (the last initializer ends
# in `)`; one ending in `}` is seen as a nested brace, which is conservative).
INIT_LIST = re.compile(r"\)\s*(noexcept\s*)?:\s*[\w:]+\s*[({]")
NAME = re.compile(r"([~\w:]+(?:<[^()]*>)?|operator\s*[^\s(]+)\s*\($")


def blank(text):
    """`text` with comments, string and character literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + (m.group(1) if m else "") + '"', i)
            j = n if end < 0 else end + len(m.group(1) if m else "") + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and (text[i - 1].isalnum()):  # a digit separator: 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def function_name(header):
    """The name before the parameter list of `header` (a function's text before its body)."""
    depth = 0
    for k in range(len(header) - 1, -1, -1):
        ch = header[k]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                before = header[:k].rstrip()
                m = re.search(r"([~\w:]+(?:<[^()]*>)?|operator\s*\S+)$", before)
                if m and not INIT_LIST.search(header[k:]):
                    return m.group(1)
                if m:  # an initializer list: keep going left to the parameter list
                    continue
    return "?"


def is_function(header):
    h = header.strip()
    if not h or CONTROL.match(h) or h.startswith(("namespace", "extern")):
        return False
    if re.search(r"\b(class|struct|union|enum)\b[^()]*$", h):
        return False
    if h.endswith("="):  # an aggregate initializer
        return False
    return bool(QUALIFIED_CLOSE.search(h) or INIT_LIST.search(h))


def long_functions(path, max_lines):
    text = blank(path.read_text(errors="replace"))
    problems = []
    stack = []  # per open brace: (is_function_body, start_line, name)
    in_function = 0  # function bodies open (0 or 1: functions do not nest at namespace level)
    last_stop = 0
    line = 1
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
        elif ch == "{":
            header = text[last_stop:i]
            fn = in_function == 0 and is_function(header)
            stack.append((fn, line, function_name(header) if fn else ""))
            in_function += 1 if fn else 0
            last_stop = i + 1
        elif ch == "}":
            if stack:
                fn, start, name = stack.pop()
                in_function -= 1 if fn else 0
                if fn and line - start + 1 > max_lines:
                    problems.append((start, name, line - start + 1))
            last_stop = i + 1
        elif ch == ";":
            last_stop = i + 1
    return problems


def main(argv):
    args = [a for a in argv[1:]]
    if "-h" in args or "--help" in args:
        print(__doc__.strip())
        return 0
    max_lines = MAX_LINES
    if "--max" in args:
        k = args.index("--max")
        value = args[k + 1] if k + 1 < len(args) else ""
        if not value.isdigit() or int(value) < 1:
            print(f"check_function_length: --max needs a positive number of lines, got "
                  f"'{value}'", file=sys.stderr)
            return 2
        max_lines = int(value)
        del args[k:k + 2]
    src = pathlib.Path(args[0]) if args else pathlib.Path(__file__).resolve().parent.parent / "src"
    if not src.is_dir():
        print(f"check_function_length: {src} is not a folder", file=sys.stderr)
        return 2
    count = 0
    for f in sorted(src.rglob("*")):
        if f.suffix not in SUFFIXES or not f.is_file():
            continue
        for start, name, length in long_functions(f, max_lines):
            if (str(f.relative_to(src.parent)), name) in PENDING:
                continue
            print(f"{f.relative_to(src.parent)}:{start}: {name} is {length} lines "
                  f"(at most {max_lines})")
            count += 1
    print(f"check_function_length: {count} function(s) over {max_lines} lines")
    return 1 if count else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
