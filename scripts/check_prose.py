#!/usr/bin/env python3
"""True prose (issue 42): fails, printing `file:line: symbol: why` for each, when a comment, a docstring, a binding's
docstring or message, or a doc names code the tree does not have. Standard library only; a few seconds.

  scripts/check_prose.py [--root DIR] [--list] [--deps DIR] [--no-dead-code] [--owners] [--words]

Read: every file of the tree but the ignored ones (.git, .venv*, build*, dist, .deps, caches; the fuzz corpus is
listed, not read). C and C++: the comments, and string literals with spaces (nanobind docstrings, messages). Python:
the comments and docstrings. Markdown: code spans, links to files, and the fenced blocks (their qualified names and
paths only).

A reference is what prose cannot mean as plain words:
  path   a path whose first folder is a top-level folder of the tree, or a file name with a source extension;
  cxx    a qualified C++ name (ortdlpack::Session::run);
  py     a dotted name rooted at one of the tree's Python packages (ortdlpack.Session.run);
  name   a code span's name (`plan_run`, `bind()`, `output_type=`, `.numpy()`); `Class.member`;
  call   name() in a comment (with arguments it may be maths: concat(x, z));
  uses   a name of the runtime the tree wraps: onnxruntime.X anywhere, and ORT's C API (its functions, its Ort*
         types) in a C/C++ comment.
Everything else is prose. `--words` adds every snake_case/CamelCase/kConstant word of a comment (for audits: other
projects' names make it noisy).

Resolved when:
  path   the file or folder exists: from the root, from the citing file, or as the tail of a path of the tree (a *
         or an UPPER-case part globs); a bare file name anywhere in the tree or among the third-party files read, or
         ALLOWED_PATTERNS. A path that ends in something a build makes (no source extension:
         tests/cpp/test_concurrency) needs only its folder;
  cxx    its first name is a namespace, class or enum of the tree and each next name is declared inside the one
         before (or its bases; a qualified name spelled in code or in a string counts too), or the first name is
         someone else's (std::, nb::, Ort*, a namespace the third-party headers use) or a template's parameter (T);
  py     the package has the first name (a module, a top-level name, a name the extension registers) and Python code
         or the extension has each next one;
  name   the tree's code has it: identifiers of C++, Python, CMake and shell, and string literals without spaces
         (a registered name, a key) but not sentences; or the third-party headers and onnxruntime's Python have it;
         or ALLOWLIST / ALLOWED_PATTERNS below. A plural (IoBindings), a prefix (ortdlpack_vd_*) and a `_`-tail of
         a known name (`no_sync` of managed_tensor_to_py_object_no_sync) count;
  uses   the tree's code uses the name (the prose describes what the code does with ORT; a name it never uses is
         stale), or ALLOWLIST has it (an ORT name a doc must cite all the same).
Bare names, bare file names and `uses` need the third-party names: without the headers CMake downloads (see
--deps) they are not checked, and the run says so (a partial list of names would give false alarms).

Dead code (--no-dead-code: off): a function an internal header (src/, python/src/, plugins/, not include/)
declares that the tree's code names only there and in at most one definition, and that no Python names (ctypes).

--owners (an audit, not a pass/fail rule yet: names a row uses count against it): in a Markdown table whose first
column lists files, each code span of the row naming a declaration of the tree must be declared in one of those files.

--list prints every reference and how it resolved, to tune the rules; without it only the failures are printed.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import builtins
import fnmatch
import io
import keyword
import os
import re
import sys
import time
import tokenize
from dataclasses import dataclass, field

# --- What is read ---------------------------------------------------------------------------------------------------

CXX_EXT = (".h", ".hpp", ".cc", ".cpp", ".cu", ".cuh", ".c")
PY_EXT = (".py", ".pyi")
MD_EXT = (".md",)
# Code whose identifiers count as the tree's (a CMake option, a shell variable, a requirement's name).
OTHER_CODE_EXT = (".cmake", ".sh", ".toml", ".txt", ".in", ".json", ".supp", ".cfg", ".ini", ".yml", ".yaml")
OTHER_CODE_NAMES = ("CMakeLists.txt", "run", "Makefile")
# The ignored paths (.gitignore's); the fuzz corpus (binary inputs) is listed, not read.
SKIP_DIRS = {".git", ".venv", ".venv-bench", ".deps", "dist", "__pycache__", ".pytest_cache", "node_modules"}
SKIP_ROOT_PREFIXES = ("build",)
NOT_READ = ("fuzz/corpus/",)
# The extensions of a file name in prose that is checked (other names: someone else's, or something a build makes).
SOURCE_FILE_EXT = ("h", "hpp", "cc", "cpp", "cu", "py", "pyi", "md", "sh", "cmake")
BARE_FILE_EXT = ("h", "cc", "py", "pyi", "md", "sh", "cmake")
# A path of the tree is checked to its last part when that is a file kept in git; otherwise (a binary, a library, a
# model a script makes) its folder is.
TREE_FILE_EXT = SOURCE_FILE_EXT + ("txt", "toml", "json", "supp", "png", "in", "cfg", "yml", "yaml")

# --- What is someone else's -----------------------------------------------------------------------------------------

# C++ namespaces of the libraries the tree uses, for when their headers are not there to read them from.
EXTERNAL_SCOPES = {
    "std", "nb", "nanobind", "pybind11", "onnxruntime", "Ort", "at", "c10", "torch", "xla", "ffi", "jax", "testing",
    "cub", "thrust", "absl", "tvm", "tensorflow", "tf", "llvm", "fuzzer", "google", "boost", "fmt", "mlx", "cuda",
    "sycl", "chrono", "this_thread", "filesystem",
}
# Prefixes of ORT's, ONNX's, DLPack's, CUDA's, HIP's, CPython's and XLA's C names (OrtSession, kDLCUDA, cudaStream_t,
# PyUnicode_Check; not the binding's PySession), and the implementation's reserved __names.
EXTERNAL_PREFIX = re.compile(
    r"^(?:Ort|ORT_|ONNX|DL[A-Z]|kDL|cuda|CU|cu[A-Z]|hip|HIP|Py_|_Py|Py[A-Z]\w*_|Py\w*Object$|PY_|XLA_|Xla|__)")
# Names a code span may cite that are neither the tree's nor in the third-party files read (the ORT and DLPack
# headers, onnxruntime's Python): other projects' names, each checked by hand.
ALLOWLIST = {
    "hist", "pedantic",  # pytest-benchmark's commands and mode (bench/README.md)
    "HAVE_GCC_ASM_FOR_X87", "HAVE_GCC_ASM_FOR_X64", "HAVE_USABLE_WCHAR_T",  # CPython's pyconfig.h
    "RECORD",  # a wheel's file list (importlib.metadata)
    # onnxruntime's, in its extension module (not read): an argument of the private C.OrtValue.from_dlpack, an
    # exception class
    "is_bool_tensor", "ModelLoaded",
    "VerifyOutputSizes", "PyInferenceSession",  # ORT's C++ internals, not its public headers
    "OpenVINO_shared_CPU", "QnnHtpShared",  # memory names plugin EP packages report
    "WGPUBuffer", "enableInt64",  # WebGPU's buffer type; the WebGPU EP's provider option
    "MESA_SHADER_CACHE_DIR",  # Mesa's environment variable
    "DeploymentHandle", "ObjectRef", "experimental_compile", "with_tensor_transport", "autoscaling_config",  # Ray
}
ALLOWED_PATTERNS = (
    "pyconfig.h", "_numpyconfig.h",  # CPython's and numpy's generated headers (docs/DEPENDENCIES.md)
    "onnxruntime*Config.cmake",  # ORT's CMake package
    "onnxruntime_test_*.py",  # ORT's Python tests, which tests/python/test_onnxruntime_suite.py runs against ortdlpack
    "onnxruntime_pybind*",  # the sources of onnxruntime's Python binding (where its errors are raised)
    "onnxruntime_qnn", "onnxruntime_ggml", "onnxruntime_ep_*",  # the modules of EP packages (docs/devices.md)
)

# --- The model ------------------------------------------------------------------------------------------------------

_CXX_TOKEN = re.compile(
    r"""(?P<lc>//[^\n]*)
      |(?P<bc>/\*.*?\*/)
      |(?P<raw>(?:u8|[uUL])?R"(?P<delim>[^()\\\s"]{0,16})\((?P<rawbody>.*?)\)(?P=delim)")
      |(?P<str>(?:u8|[uUL])?"(?:\\.|[^"\\\n])*")
      |(?P<num>\.?\d(?:[\w.]|'(?=\w)|[eEpP][+-])*)
      |(?P<chr>(?:u8|[uUL])?'(?:\\.|[^'\\\n])+')
      |(?P<id>[A-Za-z_]\w*)
      |(?P<op>::|->|\S)""",
    re.S | re.X,
)
IDENT = re.compile(r"[A-Za-z_]\w*")
IDENT_FULL = re.compile(r"[A-Za-z_]\w*\Z")
CXX_KEYWORDS = set(
    """alignas alignof and asm auto bool break case catch char char8_t char16_t char32_t class concept const consteval
    constexpr constinit const_cast continue co_await co_return co_yield decltype default delete do double dynamic_cast
    else enum explicit export extern false final float for friend goto if inline int long mutable namespace new
    noexcept not nullptr operator or override private protected public register reinterpret_cast requires return short
    signed sizeof static static_assert static_cast struct switch template this thread_local throw true try typedef
    typeid typename union unsigned using virtual void volatile wchar_t while define include pragma once ifdef ifndef
    endif elif undef defined""".split()
)
# What may stand before a name without making it a declaration (return f(x), new T(x), ...).
NOT_A_TYPE = {"return", "new", "delete", "throw", "case", "else", "goto", "co_return", "co_yield", "sizeof",
              "typename", "operator", "namespace", "decltype", "alignof", "noexcept", "do"}
BUILTINS = set(dir(builtins))


class LineIndex:
    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)


@dataclass
class Prose:
    """A piece of prose: its text and the line its first character is on."""

    path: str
    line: int
    text: str
    kind: str  # "comment", "docstring", "string" (a C++ literal with spaces), "md", "md-block"


@dataclass
class Ref:
    path: str
    line: int
    symbol: str
    kind: str  # path, link, cxx, py, name, member, call, word, uses, owner, dead
    ok: bool = True
    why: str = ""


@dataclass
class Tree:
    root: str
    files: list[str] = field(default_factory=list)
    dirs: set[str] = field(default_factory=set)
    top_dirs: set[str] = field(default_factory=set)
    basenames: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)  # the identifiers of the tree's code (and of its non-prose strings)
    scopes: dict[str, set[str]] = field(default_factory=dict)  # C++ namespace/class/enum -> the names inside it
    bases: dict[str, set[str]] = field(default_factory=dict)
    packages: dict[str, set[str]] = field(default_factory=dict)  # Python package -> the names it has
    py_names: set[str] = field(default_factory=set)  # the names of Python code
    py_classes: set[str] = field(default_factory=set)
    registered: set[str] = field(default_factory=set)  # identifier-shaped C++ string literals: m.def("run", ...)
    defs: dict[str, set[str]] = field(default_factory=dict)  # name -> the files that declare it
    code_counts: dict[str, int] = field(default_factory=dict)  # identifier -> occurrences in C++ code
    header_decls: list[tuple[str, int, str]] = field(default_factory=list)  # (internal header, line, function)
    table_rows: list[tuple[str, int, str, str]] = field(default_factory=list)  # (doc, line, first cell, the rest)
    ext_names: set[str] = field(default_factory=set)
    ext_scopes: set[str] = field(default_factory=set)
    ext_files: set[str] = field(default_factory=set)
    ort_api: set[str] = field(default_factory=set)  # ORT's C API: OrtApi's functions, Ort* types
    suffixes: set[str] = field(default_factory=set)  # the tails of known names after each `_`
    prose: list[Prose] = field(default_factory=list)
    words: bool = False


def read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def walk(root: str) -> list[str]:
    out = []
    for d, subdirs, files in os.walk(root):
        rel = os.path.relpath(d, root).replace(os.sep, "/")
        rel = "" if rel == "." else rel
        subdirs[:] = sorted(
            s for s in subdirs
            if s not in SKIP_DIRS and not s.endswith(".egg-info")
            and not (not rel and (s.startswith(SKIP_ROOT_PREFIXES) or (s.startswith(".") and s != ".ci")))
        )
        out.extend(f"{rel}/{f}" if rel else f for f in sorted(files))
    return out


def add_qualified(tree: Tree, text: str) -> None:
    """Qualified names spelled as text in code: a CMake target (GTest::gtest_main), a torch operator's name."""
    for a, b in re.findall(r"([A-Za-z_]\w*)::([A-Za-z_]\w*)", text):
        tree.scopes.setdefault(a, set()).add(b)


def literal_names(tree: Tree, s: str) -> None:
    """A string literal's names count as the code's unless it is a sentence (a message, a docstring)."""
    if not re.search(r"\s", s.strip()):
        tree.names.update(IDENT.findall(s))
    add_qualified(tree, s)


# --- C++ ------------------------------------------------------------------------------------------------------------


def scan_cxx(tree: Tree, rel: str, text: str) -> None:
    lines = LineIndex(text)
    registered: set[str] = set()
    code: list[tuple[str, str, int]] = []  # (kind, text, line): identifiers and punctuation
    run: list[tuple[int, str]] = []  # consecutive // comment lines, one piece of prose

    def flush() -> None:
        if run:
            tree.prose.append(Prose(rel, run[0][0], "\n".join(t for _, t in run), "comment"))
            run.clear()

    for m in _CXX_TOKEN.finditer(text):
        kind = m.lastgroup
        kind = "raw" if kind in ("delim", "rawbody") else kind
        line = lines.line(m.start())
        if kind == "lc":
            if run and line != run[-1][0] + 1:
                flush()
            run.append((line, m.group()[2:].lstrip("/!<")))
            continue
        flush()
        if kind == "bc":
            tree.prose.append(Prose(rel, line, re.sub(r"^\s*\*+ ?", "", m.group()[2:-2].lstrip("*!<"), flags=re.M),
                                    "comment"))
        elif kind in ("str", "raw"):
            s = m.group("rawbody") if kind == "raw" else m.group()[m.group().index('"') + 1 : -1]
            literal_names(tree, s)
            if re.fullmatch(r"[A-Za-z_][\w.]*", s):  # a name the binding registers or looks up: m.def("run", ...)
                registered.update(s.split("."))
            if s.count(" ") >= 2:
                tree.prose.append(Prose(rel, line, s if kind == "raw" else s.replace('\\"', '"'), "string"))
        elif kind in ("id", "op"):
            code.append((kind, m.group(), line))
    flush()
    tree.registered |= registered
    for t in registered:
        tree.defs.setdefault(t, set()).add(rel)
    for i, (kind, t, _) in enumerate(code):
        if kind != "id":
            continue
        tree.names.add(t)
        tree.code_counts[t] = tree.code_counts.get(t, 0) + 1
        if t in CXX_KEYWORDS or i == 0 or i == len(code) - 1:
            continue
        before, after = code[i - 1], code[i + 1][1]
        if after in ("(", ";", "=", "{", "[", ",", ":", ")") and (
                before[0] == "id" and before[1] not in NOT_A_TYPE or before[1] in ("*", "&", ">")
                or before[1] in ("{", ",") and after in (",", "=", "}")):
            tree.defs.setdefault(t, set()).add(rel)  # declared: a type (or `using`, `#define`) before it; an enumerator
    scan_cxx_scopes(tree, code, rel)
    if rel.endswith((".h", ".hpp", ".cuh")) and rel.startswith(("src/", "python/src/", "plugins/")) \
            and "/include/" not in rel:  # internal headers (a public header's functions are for others to call)
        tree.header_decls.extend((rel, line, name) for name, line in header_functions(code))


def scan_cxx_scopes(tree: Tree, code: list[tuple[str, str, int]], rel: str) -> None:
    """Which names each namespace, class and enum has: every identifier inside its braces, and what code qualifies
    with its name (RunPlan::Output)."""
    stack: list[str | None] = []  # a named scope, or None (a body, a block: its names go to the scope around it)
    pending: str | None = None  # the scope the next `{` opens
    n = len(code)

    def current() -> str | None:
        return next((s for s in reversed(stack) if s is not None), None)

    def add(scope: str | None, name: str) -> None:
        if scope is not None:
            tree.scopes.setdefault(scope, set()).add(name)

    i = 0
    while i < n:
        kind, t, _ = code[i]
        if t == "namespace":
            j, parts = i + 1, []
            while j < n and (code[j][0] == "id" or code[j][1] == "::"):
                if code[j][0] == "id" and code[j][1] != "inline":
                    parts.append(code[j][1])
                j += 1
            if j < n and code[j][1] == "{":
                outer = current()
                for p in parts:
                    add(outer, p)
                    tree.scopes.setdefault(p, set())
                    outer = p
                stack.append(parts[-1] if parts else current())  # an anonymous namespace's names are its parent's
                i = j + 1
                continue
        elif t in ("class", "struct", "union", "enum"):
            j = i + 1
            while j < n and code[j][1] in ("class", "struct"):
                j += 1
            name, bases, in_bases, depth = None, set(), False, 0
            while j < n:
                k2, t2, _ = code[j]
                if t2 in ("[", "(") and not in_bases:  # [[attributes]], alignas(...)
                    depth += 1
                elif t2 in ("]", ")") and depth:
                    depth -= 1
                elif depth:
                    pass
                elif t2 == "{":
                    break
                elif t2 == ";" or t2 in ("(", ")", "=", ",", ">") and not in_bases:  # a declaration, a template's
                    name = None
                    break
                elif t2 == ":" and name is not None:
                    in_bases = True
                elif k2 == "id" and in_bases:
                    if t2 not in ("public", "private", "protected", "virtual"):
                        bases.add(t2)
                elif k2 == "id" and t2 != "final":
                    name = t2
                j += 1
            if name is not None and j < n:
                tree.defs.setdefault(name, set()).add(rel)
                add(current(), name)
                tree.scopes.setdefault(name, set())
                tree.bases.setdefault(name, set()).update(bases)
                pending = name
                i = j
                continue
        if t == "{":
            stack.append(pending)
            pending = None
        elif t == "}":
            if stack:
                stack.pop()
        elif kind == "id":
            add(current(), t)
        elif t == "::" and i > 0 and i + 1 < n and code[i + 1][0] == "id":
            j = i - 1
            if code[j][1] == ">":  # Gc<PyBinding>::slots
                depth = 0
                while j >= 0:
                    depth += {">": 1, "<": -1}.get(code[j][1], 0)
                    if depth == 0:
                        break
                    j -= 1
                j -= 1
            if j >= 0 and code[j][0] == "id":
                tree.scopes.setdefault(code[j][1], set()).add(code[i + 1][1])
        i += 1


def header_functions(code: list[tuple[str, str, int]]) -> list[tuple[str, int]]:
    """The functions a header declares at namespace scope: `type name(` outside any class or body."""
    out = []
    scopes: list[str] = []  # "ns" (namespace, extern "C") or "other"
    opening = None
    for i, (kind, t, line) in enumerate(code):
        if t in ("namespace", "extern"):
            opening = "ns"
        elif t in ("class", "struct", "union", "enum", ";", "(", "="):
            opening = None
        if t == "{":
            scopes.append(opening or "other")
            opening = None
            continue
        if t == "}":
            if scopes:
                scopes.pop()
            continue
        if kind != "id" or "other" in scopes or t in CXX_KEYWORDS or i == 0 or i + 1 >= len(code):
            continue
        before = code[i - 1]
        typed = before[0] == "id" and before[1] not in NOT_A_TYPE or before[1] in (">", "*", "&")
        if code[i + 1][1] == "(" and typed:
            if not (t.isupper() or t.startswith("_")):  # not a macro
                out.append((t, line))
    return out


# --- Python ---------------------------------------------------------------------------------------------------------


def scan_python(tree: Tree, rel: str, text: str, package: str | None) -> None:
    try:
        module = ast.parse(text)
    except SyntaxError:
        return
    docstrings: set[int] = set()
    for node in ast.walk(module):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                docstrings.add(id(body[0].value))
                tree.prose.append(Prose(rel, body[0].value.lineno, body[0].value.value, "docstring"))
            if not isinstance(node, ast.Module):
                tree.defs.setdefault(node.name, set()).add(rel)
                for b in body:  # class attributes, a function's locals
                    for target in b.targets if isinstance(b, ast.Assign) else [b.target] \
                            if isinstance(b, ast.AnnAssign) else []:
                        for n in ast.walk(target):
                            if isinstance(n, ast.Name):
                                tree.defs.setdefault(n.id, set()).add(rel)
        names: list[str] = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
            if isinstance(node, ast.ClassDef):
                tree.py_classes.add(node.name)
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, ast.keyword) and node.arg:
            names = [node.arg]
        elif isinstance(node, ast.alias):
            names = node.name.split(".") + ([node.asname] if node.asname else [])
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = node.module.split(".")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            literal_names(tree, node.value)
        tree.names.update(names)
        tree.py_names.update(names)
    top: set[str] = set()
    for node in module.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            top.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for n in ast.walk(target):
                    if isinstance(n, ast.Name):
                        top.add(n.id)
                        tree.defs.setdefault(n.id, set()).add(rel)
    if package:  # what `import package` gives: the names its __init__.py binds (its imports included)
        tree.packages.setdefault(package, set())
        if rel.endswith(f"{package}/__init__.py"):
            tree.packages[package].update(top)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                tree.prose.append(Prose(rel, tok.start[0], tok.string.lstrip("#"), "comment"))
    except (tokenize.TokenError, SyntaxError):
        pass


def python_package(files: set[str], rel: str) -> str | None:
    """The top-level package a module is in (the folder of the outermost __init__.py above it), or None."""
    parts = rel.split("/")
    pkg = None
    for k in range(len(parts) - 1, 0, -1):
        if "/".join(parts[:k] + ["__init__.py"]) not in files:
            break
        pkg = parts[k - 1]
    return pkg


# --- Markdown -------------------------------------------------------------------------------------------------------


def scan_markdown(tree: Tree, rel: str, text: str) -> None:
    prose_lines: list[str] = []
    block: list[str] = []
    block_start, fence = 0, None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"\s*(```+|~~~+)", line)
        if fence is None and m:
            fence, block, block_start = m.group(1), [], n + 1
        elif fence is not None:
            if line.strip().startswith(fence):
                tree.prose.append(Prose(rel, block_start, "\n".join(block), "md-block"))
                fence = None
            else:
                block.append(line)
        else:
            prose_lines.append(line)
            if line.startswith("|") and not re.fullmatch(r"[|:\s-]+", line):
                cells = re.findall(r"(?:`[^`]*`|[^|`])+", line)  # a | inside a code span is no cell border
                if len(cells) >= 2:
                    tree.table_rows.append((rel, n, cells[0], "|".join(cells[1:])))
            continue
        prose_lines.append("")
    tree.prose.append(Prose(rel, 1, "\n".join(prose_lines), "md"))


# --- Third-party names ----------------------------------------------------------------------------------------------


def deps_dirs(root: str, explicit: str | None) -> list[str]:
    """Where CMake keeps the pinned third-party headers (cmake/Dependencies.cmake's order)."""
    if explicit:
        return [explicit] if os.path.isdir(explicit) else []
    out = [os.environ.get("ORTDLPACK_DEPS_DIR", "")]
    if os.environ.get("XDG_CACHE_HOME"):
        out.append(os.path.join(os.environ["XDG_CACHE_HOME"], "ortdlpack"))
    out.append(os.path.join(os.path.expanduser("~"), ".cache", "ortdlpack"))
    out.append(os.path.join(root, "build", "_ortdlpack_deps"))
    return [d for d in out if d and os.path.isdir(d)]


def onnxruntime_python(root: str) -> list[str]:
    """onnxruntime's Python sources: the project's .venv's, and this interpreter's (found, not imported)."""
    dirs = []
    lib = os.path.join(root, ".venv", "lib")
    if os.path.isdir(lib):
        dirs += [os.path.join(lib, v, "site-packages", "onnxruntime") for v in sorted(os.listdir(lib))]
    try:
        import importlib.util

        spec = importlib.util.find_spec("onnxruntime")
        if spec and spec.submodule_search_locations:
            dirs += list(spec.submodule_search_locations)
    except (ImportError, ValueError):
        pass
    out = []
    for d in dict.fromkeys(dirs):
        capi = os.path.join(d, "capi")
        if os.path.isdir(capi):
            out += [os.path.join(capi, f) for f in sorted(os.listdir(capi)) if f.endswith(".py")]
    return out


def scan_external(tree: Tree, dirs: list[str]) -> None:
    seen, headers = set(), []
    for d in dirs:
        for sub, _, files in os.walk(d):
            for f in sorted(files):
                if f.endswith((".h", ".hpp")) and f not in seen:
                    seen.add(f)
                    headers.append(os.path.join(sub, f))
    if not headers:
        return  # the names are unknown: the rules that need them are off (a partial list would give false alarms)
    for p in headers + onnxruntime_python(tree.root):
        text = read(p)
        tree.ext_files.add(os.path.basename(p))
        tree.ext_names.update(IDENT.findall(text))
        tree.ext_scopes.update(re.findall(r"([A-Za-z_]\w*)\s*::", text))
        tree.ext_scopes.update(re.findall(r"\bnamespace\s+([A-Za-z_]\w*)", text))
        if re.fullmatch(r"onnxruntime\w*_c_api\.h", os.path.basename(p)):
            tree.ort_api.update(re.findall(r"\bORT_API2_STATUS\(\s*(\w+)", text))
            tree.ort_api.update(re.findall(r"\bORT_API_T\([^,]+,\s*(\w+)", text))
            tree.ort_api.update(re.findall(r"\bORT_CLASS_RELEASE\(\s*(\w+)", text) and
                                {"Release" + x for x in re.findall(r"\bORT_CLASS_RELEASE\(\s*(\w+)", text)})
            tree.ort_api.update(re.findall(r"\b(Ort[A-Z]\w+)", text))


# --- Building the index ---------------------------------------------------------------------------------------------


def build(root: str, deps: str | None) -> Tree:
    tree = Tree(root=os.path.abspath(root))
    tree.files = walk(tree.root)
    files = set(tree.files)
    for f in tree.files:
        parts = f.split("/")
        if len(parts) > 1:
            tree.top_dirs.add(parts[0])
        tree.dirs.update("/".join(parts[:k]) for k in range(1, len(parts)))
        tree.basenames.add(parts[-1])
    for rel in tree.files:
        if rel.startswith(NOT_READ):
            continue
        full = os.path.join(tree.root, rel)
        if rel.endswith(CXX_EXT):
            scan_cxx(tree, rel, read(full))
        elif rel.endswith(PY_EXT):
            scan_python(tree, rel, read(full), python_package(files, rel))
        elif rel.endswith(MD_EXT):
            scan_markdown(tree, rel, read(full))
        elif rel.endswith(OTHER_CODE_EXT) or os.path.basename(rel) in OTHER_CODE_NAMES:
            text = read(full)
            if "\0" not in text:
                tree.names.update(IDENT.findall(text))
                add_qualified(tree, text)
    for pkg, names in tree.packages.items():  # and its modules
        names.update(f.rsplit("/", 1)[-1].split(".")[0] for f in tree.files
                     if f.endswith(PY_EXT) and pkg in f.split("/")[:-1])
    scan_external(tree, deps_dirs(tree.root, deps))
    for n in tree.names | tree.ext_names | ALLOWLIST:
        i = n.find("_", 1)
        while i != -1:
            tree.suffixes.add(n[i + 1 :])
            i = n.find("_", i + 1)
    return tree


# --- Finding references in prose ------------------------------------------------------------------------------------

CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
CXX_QUALIFIED = re.compile(r"(?<![\w:.])((?:[A-Za-z_]\w*(?:<[^<>\s]*(?:<[^<>\s]*>)?[^<>\s]*>)?::)+~?[A-Za-z_]\w*)")
PATH = re.compile(r"(?<![\w/.~-])((?:\.?[\w-]+/)+(?:[\w*.-]*[\w*])?/?)")
FILE_NAME = re.compile(r"(?<![\w/.-])([\w-]+\.(?:" + "|".join(SOURCE_FILE_EXT) + r"))\b(?![./\w-])")
CALL = re.compile(r"(?<![\w:$-])\.?([A-Za-z_]\w*)\(\)(?!\w)")
ORT_PYTHON = re.compile(r"(?<![\w.])(?:onnxruntime|ort)((?:\.[A-Za-z_]\w*)+)")
CODE_SHAPED = re.compile(
    r"(?<![\w.:/$<-])("
    r"[a-z]+_\w*[a-z0-9]\w*"  # snake_case
    r"|[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]"  # MACRO_CASE
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+"  # CamelCase
    r"|[a-z]+[A-Z]\w*"  # camelCase
    r"|k[A-Z]\w*"  # kConstant
    r")(?![\w-]|\.\w|::|/)"
)
URL = re.compile(r"\w+://\S+")


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def refs_in(tree: Tree, p: Prose) -> list[Ref]:
    text = URL.sub(lambda m: " " * len(m.group()), p.text)
    lines = LineIndex(text)
    out: list[Ref] = []

    def add(kind: str, sym: str, offset: int) -> None:
        out.append(Ref(p.path, p.line + lines.line(offset) - 1, sym, kind))

    for m in ORT_PYTHON.finditer(text):
        add("uses", m.group(0), m.start())
    if p.kind == "md-block":
        qualified(tree, text, add)
        return out
    spans = []
    for m in CODE_SPAN.finditer(text):
        span = m.group(2)
        if "\n\n" not in span:
            spans.append(m.span())
            code_span(tree, span.strip(), m.start(2) + len(span) - len(span.lstrip()), add)
    if p.kind == "md":
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            target = m.group(1).split("#")[0]
            if target and "://" not in target and not target.startswith("mailto:"):
                add("link", target, m.start(1))
        return out
    text = blank(text, spans)
    text = blank(text, qualified(tree, text, add))
    calls = []
    for m in CALL.finditer(text):
        add("call", m.group(1), m.start(1))
        calls.append(m.span())
    if p.kind == "comment" and p.path.endswith(CXX_EXT):
        for m in re.finditer(r"(?<![\w.:])([A-Z]\w+)", text):
            if m.group(1) in tree.ort_api:
                add("uses", m.group(1), m.start(1))
    if tree.words:
        for m in CODE_SHAPED.finditer(blank(text, calls)):
            add("word", m.group(1), m.start(1))
    return out


def qualified(tree: Tree, text: str, add) -> list[tuple[int, int]]:
    """The references prose cannot mean as words: paths, C++ qualified names, the packages' dotted names."""
    taken = []

    def take(kind: str, m: re.Match) -> None:
        if not any(a < m.end(1) and m.start(1) < b for a, b in taken):
            add(kind, m.group(1), m.start(1))
            taken.append(m.span(1))

    for m in PATH.finditer(text):
        if m.group(1).lstrip("./").split("/")[0] in tree.top_dirs:
            take("path", m)
    for m in FILE_NAME.finditer(text):
        take("path", m)
    for m in CXX_QUALIFIED.finditer(text):
        take("cxx", m)
    if tree.packages:
        pkgs = "|".join(re.escape(p) for p in sorted(tree.packages))
        for m in re.finditer(r"(?<![\w.:/-])((?:" + pkgs + r")(?:\.[A-Za-z_]\w*)+)", text):
            take("py", m)
    return taken


def code_span(tree: Tree, s: str, offset: int, add) -> None:
    """What a code span names: the name, call, qualified name or path it is (a command: its script)."""
    if not s or s[0] in "\"'0123456789-+<[{$!|#" or s.startswith(("~", "/", "http")):
        return
    if re.search(r"\s", s):  # a command or an expression: its first word when that is a path, and what is qualified
        first = s.split()[0]
        if "/" in first and first.lstrip("./").split("/")[0] in tree.top_dirs:
            add("path", first, offset)
        elif not s.startswith(("python", "pip", "cmake", "ctest", "git", "import ", "from ")):
            qualified(tree, s, lambda k, sym, o: add(k, sym, offset + o))
        return
    s = s.lstrip("@*&")
    if "/" in s or re.search(r"\.(?:" + "|".join(SOURCE_FILE_EXT) + r")$", s):
        first = s.lstrip("./").split("/")[0]
        if first in tree.top_dirs or "/" not in s and not s.startswith("."):  # not build/, .cc, ~/.cache
            add("path", s, offset)
        return
    s = re.split(r"[=(\[]", s, maxsplit=1)[0]
    if "::" in s:
        if CXX_QUALIFIED.fullmatch(s):
            add("cxx", s, offset)
        return
    if "." in s:
        root, *rest = s.split(".")
        if not all(IDENT_FULL.match(x) for x in rest):
            return
        if not root:  # `.numpy()`
            add("name", rest[0], offset)
        elif root in tree.packages:
            add("py", s, offset)
        elif root in tree.registered or root in tree.py_classes:  # `Session.bind`, `InferenceSession.run`
            add("member", s, offset)
        return  # a variable's attribute (`t.numpy()`), someone else's module (`torch.compile`)
    if IDENT_FULL.match(s) and len(s) > 1:
        add("name", s, offset)


# --- Resolving ------------------------------------------------------------------------------------------------------


def members(tree: Tree, scope: str, seen: set[str] | None = None) -> set[str]:
    seen = set() if seen is None else seen
    if scope in seen:
        return set()
    seen.add(scope)
    out = set(tree.scopes.get(scope, ()))
    for b in tree.bases.get(scope, ()):
        out |= members(tree, b, seen)
    return out


def external_name(tree: Tree, name: str) -> bool:
    return (name in tree.ext_names or name in ALLOWLIST or bool(EXTERNAL_PREFIX.match(name))
            or any(fnmatch.fnmatchcase(name, p) for p in ALLOWED_PATTERNS))


def in_code(tree: Tree, name: str) -> bool:
    return name in tree.names or name.endswith("s") and name[:-1] in tree.names


def known_name(tree: Tree, name: str) -> bool:
    if (name in tree.names or external_name(tree, name) or keyword.iskeyword(name) or name in CXX_KEYWORDS
            or name in BUILTINS or name.endswith("_")):  # ortdlpack_vd_stream_*: a prefix
        return True
    if name.endswith("s") and (known_name(tree, name[:-1]) or name.endswith("es") and known_name(tree, name[:-2])):
        return True  # a plural: IoBindings, NodeArgs
    return name.lstrip("_") in tree.suffixes  # a tail: `no_sync` of managed_tensor_to_py_object_no_sync


def resolve(tree: Tree, r: Ref, citing_dir: str) -> None:
    s = r.symbol
    if r.kind in ("path", "link"):
        r.ok, r.why = resolve_path(tree, s, citing_dir, r.kind == "link")
    elif r.kind == "cxx":
        parts = [re.sub(r"<.*>", "", x).lstrip("~") for x in re.split(r"::(?![^<>]*>)", s)]
        # std::, nb::, onnxruntime::python::...: what the tree uses of them is not all they have
        if parts[0] in EXTERNAL_SCOPES or EXTERNAL_PREFIX.match(parts[0]) or re.fullmatch(r"[A-Z]", parts[0]) or \
                parts[0] not in tree.scopes and parts[0] in tree.ext_scopes:
            r.why = "someone else's"
            return
        if parts[0] not in tree.scopes:
            r.ok, r.why = False, f"no namespace, class or enum `{parts[0]}` in the tree"
            return
        for a, b in zip(parts, parts[1:]):
            if b != a and b not in members(tree, a):
                if a in tree.ext_scopes and b in tree.ext_names:  # ORT's C++ API has a class of that name too
                    r.why = "someone else's"
                else:
                    r.ok, r.why = False, f"`{a}` has no `{b}`"
                return
        r.why = "declared"
    elif r.kind == "py":
        root, *rest = s.split(".")
        if rest[0] not in tree.packages[root] and not (rest[0].endswith("s") and rest[0][:-1] in tree.packages[root]):
            r.ok, r.why = False, f"package `{root}` has no `{rest[0]}`"
            return
        for x in rest[1:]:
            if x not in tree.py_names and x not in tree.registered and not external_name(tree, x):
                r.ok, r.why = False, f"no Python name `{x}` in the tree"
                return
        r.why = "defined"
    elif not tree.ext_names:
        r.why = "not checked (the third-party names are unknown)"
    elif r.kind == "uses":
        missing = [x for x in s.split(".")[1:] or [s] if not in_code(tree, x) and x not in ALLOWLIST]
        if missing:
            r.ok, r.why = False, f"the tree's code never uses `{missing[0]}`"
        else:
            r.why = "used"
    elif r.kind == "member":
        missing = [x for x in s.split(".") if not known_name(tree, x)]
        if missing:
            r.ok, r.why = False, f"no `{missing[0]}` in the tree's code"
        else:
            r.why = "in code"
    elif known_name(tree, s):
        r.why = "in code" if s in tree.names else "someone else's"
    else:
        r.ok, r.why = False, "the tree's code has no such name"


def resolve_path(tree: Tree, s: str, citing_dir: str, link: bool) -> tuple[bool, str]:
    s = s.rstrip(".,;:)")
    while s.startswith("./"):
        s = s[2:]
    is_dir = s.endswith("/")
    parts = ["*" if re.fullmatch(r"[A-Z][A-Z_]+", c) else c for c in s.rstrip("/").split("/")]  # fuzz/corpus/TARGET
    plain = "/".join(parts)
    if not plain or plain == ".":
        return True, "exists"

    def exists(path: str) -> bool:
        local = os.path.normpath(os.path.join(citing_dir, path)).replace(os.sep, "/")
        for c in (path, local):
            if "*" in c:
                if any(fnmatch.fnmatch(f, c) for f in tree.files) or any(fnmatch.fnmatch(d, c) for d in tree.dirs):
                    return True
            elif c in tree.dirs or c in tree.files:
                return True
        if "/" in path:  # the tail of a path of the tree (ortdlpack/__init__.py)
            pat = "*/" + path
            return any(fnmatch.fnmatch(f, pat) for f in tree.files) or any(fnmatch.fnmatch(d, pat) for d in tree.dirs)
        return False

    if exists(plain):
        return True, "exists"
    if link:
        return False, "no such file"
    if "/" not in plain:  # a file name
        if plain.rsplit(".", 1)[-1] not in BARE_FILE_EXT or plain in tree.ext_files \
                or any(fnmatch.fnmatchcase(plain, p) for p in ALLOWED_PATTERNS):
            return True, "someone else's"
        if not tree.ext_files:
            return True, "not checked (the third-party files are unknown)"
        if any(fnmatch.fnmatch(b, plain) for b in tree.basenames):
            return True, "the file name exists"
        return False, "no such file in the tree"
    if not is_dir and parts[-1].rsplit(".", 1)[-1] not in TREE_FILE_EXT and "*" not in parts[-1]:
        if exists("/".join(parts[:-1])):  # something a build makes, in a folder of the tree
            return True, "its folder exists"
    return False, "no such path"


# --- Tables of files, dead code ------------------------------------------------------------------------------------


def row_files(tree: Tree, cell: str) -> list[str]:
    """The tree's files a table row's first cell names: paths, and `.cc`, `__main__.py`, `ep.*` after a path."""
    out: list[str] = []
    prev = None
    for m in re.finditer(r"`([^`]+)`", cell):
        s = m.group(1).strip()
        if s.startswith(".") and prev:  # `.cc`: the previous path with another extension
            s = prev.rsplit(".", 1)[0] + s
        elif "/" not in s.rstrip("/") and prev:  # `__main__.py`, `ep.*`: in the previous path's folder
            s = prev.rsplit("/", 1)[0] + "/" + s
        out += [f for f in tree.files if (f.startswith(s) if s.endswith("/") else fnmatch.fnmatch(f, s))]
        prev = s
    return out


def table_owners(tree: Tree) -> list[Ref]:
    out = []
    for doc, line, first, rest in tree.table_rows:
        files = set(row_files(tree, first))
        if not files:
            continue
        for m in re.finditer(r"`([^`]+)`", rest):
            s = re.sub(r"<.*>$", "", re.split(r"[(=]", m.group(1).strip(), maxsplit=1)[0])
            root, _, attr = s.partition(".")
            if attr and root in tree.packages and IDENT_FULL.match(attr):
                s = attr  # `ortdlpack.Session`
            if not IDENT_FULL.match(s) or s not in tree.defs or external_name(tree, s):
                continue
            r = Ref(doc, line, s, "owner", why="declared in the row's files")
            if not tree.defs[s] & files:
                where = sorted(tree.defs[s])
                r.ok = False
                r.why = f"the row's files do not declare it (it is declared in {', '.join(where[:3])}" \
                        f"{' ...' if len(where) > 3 else ''})"
            out.append(r)
    return out


def dead_code(tree: Tree) -> list[Ref]:
    out, seen = [], set()
    for header, line, name in tree.header_decls:
        if name not in seen and tree.code_counts.get(name, 0) <= 2 and name not in tree.registered \
                and name not in tree.py_names:
            out.append(Ref(header, line, name, "dead", False, "declared here; nothing but its definition names it"))
        seen.add(name)
    return out


# --- Main -----------------------------------------------------------------------------------------------------------


def check(root: str, deps: str | None = None, dead: bool = True, owners: bool = False,
          words: bool = False) -> tuple[list[Ref], Tree]:
    tree = build(root, deps)
    tree.words = words
    refs: list[Ref] = []
    for p in tree.prose:
        for r in refs_in(tree, p):
            resolve(tree, r, os.path.dirname(p.path))
            refs.append(r)
    if owners:
        refs += table_owners(tree)
    if dead:
        refs += dead_code(tree)
    refs.sort(key=lambda r: (r.path, r.line, r.symbol))
    return refs, tree


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="See the module docstring for the rules.")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="the tree to check (default: this script's repository)")
    ap.add_argument("--list", action="store_true", help="print every reference and how it resolved")
    ap.add_argument("--deps", help="the folder of the third-party headers (default: CMake's cache of them)")
    ap.add_argument("--no-dead-code", action="store_true", help="skip the check for functions nothing uses")
    ap.add_argument("--owners", action="store_true", help="also check what the tables of files say each file has")
    ap.add_argument("--words", action="store_true", help="also check every code-shaped word of a comment")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    refs, tree = check(args.root, args.deps, not args.no_dead_code, args.owners, args.words)
    bad = [r for r in refs if not r.ok]
    for r in refs if args.list else bad:
        prefix = f"{'ok ' if r.ok else 'BAD'} {r.kind:6} " if args.list else ""
        print(f"{prefix}{r.path}:{r.line}: {r.symbol}: {r.why}")
    note = "" if tree.ext_names else "; the third-party headers were not found (see --deps): bare names not checked"
    print(f"check_prose: {len(refs)} references, {len(bad)} stale, {time.monotonic() - t0:.1f} s{note}",
          file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
