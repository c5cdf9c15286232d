"""The project's import graph: no module imports itself back, and the folders are layered.

The graph is read from the code with :mod:`ast`, not by importing it: every
``.py`` file under ``src/revasm`` is a module (``src/revasm/isa/table.py`` is
``revasm.isa.table``); each subpackage of ``revasm`` is a top-level package of
the layering, and the modules directly in ``src/revasm`` (the Python API) are
``revasm``.  Every ``import x`` / ``from x import y`` in a module -- relative
ones resolved, deferred ones inside functions and ``TYPE_CHECKING`` blocks
included, a package ``__init__`` importing its submodules included -- is an
edge.  ``from pkg import name`` is an edge to ``pkg.name`` when that is a
module, else to ``pkg``.  Strings given to ``importlib.import_module`` are not
seen.

Layering: ``LAYERS`` says which other top-level packages each top-level
package may import; ``KNOWN_VIOLATIONS`` lists the imports that break it
today, each with the reason, to be emptied.

No module uses a private name (``_name``) of a package outside the project and the
standard library -- ``amaranth.hdl._ast`` and the like change in any release: neither
imported (``from amaranth.hdl._ast import Slice``, ``from amaranth.hdl import _ast``) nor
reached as an attribute of an imported package (``amaranth.hdl._ast.Slice``).
"""
from __future__ import annotations

import ast
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Every top-level package that may be imported by anything above the simulators.
_EVERYTHING = frozenset({"revasm", "revasm.cli", "revasm.isa", "revasm.assembler",
                         "revasm.machine", "revasm.sim", "revasm.compiler", "revasm.rtl",
                         "revasm.report", "revasm.bench", "revasm.debug", "revasm.batching"})

#: Which other top-level packages each top-level package may import (the pipeline:
#: isa <- assembler <- machine <- sim <- rtl / report / batching <- bench <- cli / the Python API).
#: A subpackage of revasm that is missing here fails the test: say where it sits.
LAYERS: dict[str, frozenset[str]] = {
    "revasm.isa": frozenset(),
    "revasm.assembler": frozenset({"revasm.isa"}),
    # What every engine, the RTL and the debugger share (faults, snapshot, trace record,
    # the next-PC rule): below every engine, so that none owns them.
    "revasm.machine": frozenset({"revasm.isa", "revasm.assembler"}),
    "revasm.sim": frozenset({"revasm.isa", "revasm.assembler", "revasm.machine"}),
    # The compiler produces assembly; it does not run it (but see KNOWN_VIOLATIONS).
    "revasm.compiler": frozenset({"revasm.isa", "revasm.assembler"}),
    # The RTL shares the machine's fault kinds and is checked against the reference
    # simulator (cosim).
    "revasm.rtl": frozenset({"revasm.isa", "revasm.assembler", "revasm.machine",
                             "revasm.sim"}),
    "revasm.report": frozenset({"revasm.isa", "revasm.assembler", "revasm.machine",
                                "revasm.sim"}),
    # Batches (inputs, chunks, sinks, Dask): one program over many lanes on any engine;
    # what the API's batch calls and `revasm batch` use, never above them.
    "revasm.batching": frozenset({"revasm.isa", "revasm.assembler", "revasm.machine",
                                  "revasm.sim"}),
    "revasm.bench": frozenset({"revasm.isa", "revasm.assembler", "revasm.machine",
                               "revasm.sim", "revasm.compiler", "revasm.rtl",
                               "revasm.batching", "revasm"}),
    # The debugger drives the reference machine and reads the compiler's source maps.
    "revasm.debug": frozenset({"revasm.isa", "revasm.assembler", "revasm.machine",
                               "revasm.sim", "revasm.compiler"}),
    "revasm.cli": _EVERYTHING,
    # The Python API: above the compiler, the simulators, reports and the RTL; below the
    # command line and the benchmarks.
    "revasm": frozenset({"revasm.isa", "revasm.assembler", "revasm.machine", "revasm.sim",
                         "revasm.compiler", "revasm.report", "revasm.rtl", "revasm.batching"}),
}

#: Imports that break LAYERS today: (importing module or package, imported module or
#: package) -> why.  A pair covers everything below both names.  Empty this; an entry
#: that no import needs any more is reported as a warning.
KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {
}

#: Modules that belong to the command line wherever they sit: ``python -m revasm`` and the
#: ``revasm`` script's entry point (``launch``: Ctrl-C while the command line loads).
COMMAND_LINE_ENTRIES = frozenset({"revasm.__main__", "revasm.launch"})

#: Inside ``revasm.compiler``: the front end and the backend meet only in the IR
#: (frontend -> ir <- backend; ``errors`` is the positions and errors all of them report).
#: Which other parts of the compiler each part may import; ``api``, ``edsl`` and
#: ``expression`` sit above all three and may import any.
COMPILER_LAYERS: dict[str, frozenset[str]] = {
    "revasm.compiler.errors": frozenset(),
    "revasm.compiler.ir": frozenset({"revasm.compiler.errors"}),
    "revasm.compiler.frontend": frozenset({"revasm.compiler.ir", "revasm.compiler.errors"}),
    "revasm.compiler.backend": frozenset({"revasm.compiler.ir", "revasm.compiler.errors"}),
}

#: Inside ``revasm.rtl``: the parts by job.  The hardware (the Amaranth design) imports no
#: other part; verification (co-simulation, Verilator, formal proofs) and synthesis import
#: the hardware and never each other; ``tools`` (the outside programs and their caches)
#: serves both and imports nothing of the RTL.  Every module of the RTL is in one part.
RTL_LAYERS: dict[str, frozenset[str]] = {
    "revasm.rtl.tools": frozenset(),
    "revasm.rtl.hardware": frozenset(),
    "revasm.rtl.verification": frozenset({"revasm.rtl.hardware", "revasm.rtl.tools"}),
    "revasm.rtl.synthesis": frozenset({"revasm.rtl.hardware", "revasm.rtl.tools"}),
}


# --- the graph -------------------------------------------------------------------

PACKAGE = ROOT / "src" / "revasm"


def package_roots(package: Path = PACKAGE) -> dict[str, Path]:
    """Top-level package of the layering -> its folder: ``revasm`` (the modules directly in
    ``src/revasm``) and each subpackage ``revasm.<folder>``."""
    roots = {"revasm": package}
    for init in sorted(package.glob("*/__init__.py")):
        roots[f"revasm.{init.parent.name}"] = init.parent
    return roots


def module_files(package: Path = PACKAGE, name: str = "revasm") -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package ``__init__``) of the package ``name`` in the
    folder ``package``, as the installed package names them."""
    modules: dict[str, tuple[Path, bool]] = {}
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = path.relative_to(package).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        modules[".".join((name, *parts))] = (path, is_package)
    return modules


def _imported_names(node: ast.AST, package: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        return [source] + [f"{source}.{alias.name}" for alias in node.names]
    return []


def import_graph(modules: dict[str, tuple[Path, bool]]) -> dict[str, dict[str, int]]:
    """Module -> {imported project module: line of the first such import}."""
    graph: dict[str, dict[str, int]] = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = _imported_names(node, package)
            if not names:
                continue
            source, members = names[0], names[1:]
            # ``from pkg import sub`` depends on pkg.sub when it is a module, else on pkg.
            targets = [m if m in modules else source for m in members] or [source]
            for target in targets:
                while target and target not in modules:  # a name inside a module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges[target] = min(edges.get(target, node.lineno), node.lineno)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]] | dict[str, set[str]]) -> list[list[str]]:
    """One closed path (first module repeated at the end) per strongly connected
    component with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in graph:
                    continue
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return [_closed_path(graph, component) for component in components]


def _closed_path(graph, component: list[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, inside it."""
    members = set(component)
    start = component[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph[node]):
                if successor == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if successor in members and successor not in came_from:
                    came_from[successor] = node
                    following.append(successor)
        frontier = following
    raise AssertionError(f"{component} is not strongly connected")


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def top_level(name: str, roots: dict[str, Path]) -> str:
    return max((package for package in roots if _within(name, package)), key=len)


def layering_violations(graph: dict[str, dict[str, int]], roots: dict[str, Path],
                        layers: dict[str, frozenset[str]],
                        known: dict[tuple[str, str], str]) -> tuple[list[str], set]:
    """Imports LAYERS forbids and no KNOWN_VIOLATIONS entry covers; and the entries used."""
    violations: list[str] = []
    used: set[tuple[str, str]] = set()
    for name in sorted(graph):
        importer = "revasm.cli" if name in COMMAND_LINE_ENTRIES else top_level(name, roots)
        for target, line in sorted(graph[name].items()):
            imported = top_level(target, roots)
            if imported == importer or imported in layers.get(importer, frozenset()):
                continue
            covering = [pair for pair in known
                        if _within(name, pair[0]) and _within(target, pair[1])]
            if covering:
                used.update(covering)
                continue
            violations.append(f"{name} (line {line}) imports {target}: {importer} may import "
                              f"only {sorted(layers.get(importer, ())) or 'nothing else'}")
    return violations, used


def part_violations(graph: dict[str, dict[str, int]],
                    parts: dict[str, frozenset[str]]) -> list[str]:
    """Imports between the ``parts`` of one package that ``parts`` forbids (an import of
    anything outside the parts is another rule's business)."""
    def part(name: str) -> str | None:
        return next((p for p in parts if _within(name, p)), None)

    violations = []
    for name in sorted(graph):
        importer = part(name)
        if importer is None:
            continue
        for target, line in sorted(graph[name].items()):
            imported = part(target)
            if imported is None or imported == importer or imported in parts[importer]:
                continue
            violations.append(f"{name} (line {line}) imports {target}: {importer} may import "
                              f"only {sorted(parts[importer]) or 'nothing else'}")
    return violations


def _private(dotted: str) -> bool:
    """A dotted path with a private part (``_ast``; not a dunder such as ``__version__``)."""
    return any(part.startswith("_") and not part.endswith("__") for part in dotted.split("."))


def _third_party(dotted: str, project: str) -> bool:
    root = dotted.partition(".")[0]
    return root != project and root not in sys.stdlib_module_names


def _attribute_path(node: ast.Attribute) -> str | None:
    """``a.b.c`` of an attribute chain on a name, else None (a call, a subscript...)."""
    parts = []
    value: ast.expr = node
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    return ".".join([value.id, *reversed(parts)]) if isinstance(value, ast.Name) else None


def private_third_party_uses(modules: dict[str, tuple[Path, bool]],
                             project: str = "revasm") -> list[str]:
    """Where a module imports a private name of a third-party package, or reaches one as an
    attribute of a package it imported (relative imports are the project's own)."""
    found = []
    for name, (path, _) in sorted(modules.items()):
        tree = ast.parse(path.read_text(), str(path))
        bound: dict[str, str] = {}  # local name -> the third-party module or name it is
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported = [(alias.name, alias.asname or alias.name.partition(".")[0],
                             alias.name if alias.asname else alias.name.partition(".")[0])
                            for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                imported = [(f"{node.module}.{alias.name}", alias.asname or alias.name,
                             f"{node.module}.{alias.name}") for alias in node.names]
            else:
                continue
            for dotted, local, target in imported:
                if not _third_party(dotted, project):
                    continue
                bound[local] = target
                if _private(dotted):
                    found.append(f"{name} (line {node.lineno}) imports {dotted}")
        inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or id(node) in inner:  # whole chains only
                continue
            dotted = _attribute_path(node)
            if dotted is None:
                continue
            local, _, rest = dotted.partition(".")
            if local in bound and _private(rest):
                found.append(f"{name} (line {node.lineno}) uses {bound[local]}.{rest}")
    return sorted(set(found))


def private_project_imports(modules: dict[str, tuple[Path, bool]],
                            project: str = "revasm") -> list[str]:
    """Where a module imports a private name (``_name``) of another module of the project:
    what one module uses of another is its public surface, named without an underscore."""
    found = []
    for name, (path, _) in sorted(modules.items()):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            if not node.level and not (node.module or "").startswith(project):
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.endswith("__"):
                    found.append(f"{name} (line {node.lineno}) imports "
                                 f"{'.' * node.level}{node.module or ''}.{alias.name}")
    return found


# --- the tests ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def project():
    roots = package_roots()
    modules = module_files()
    return roots, modules, import_graph(modules)


def _describe(cycle: list[str], graph, modules) -> str:
    steps = []
    for source, target in zip(cycle, cycle[1:]):
        path = modules[source][0].relative_to(ROOT) if modules else source
        steps.append(f"  {source} -> {target}  ({path}:{graph[source][target]})")
    return "import cycle " + " -> ".join(cycle) + ":\n" + "\n".join(steps)


def test_no_module_imports_itself_back(project):
    _, modules, graph = project
    found = cycles(graph)
    assert not found, "\n".join(_describe(cycle, graph, modules) for cycle in found)


def test_every_subpackage_has_a_layer(project):
    roots, _, _ = project
    missing = sorted(set(roots) - set(LAYERS))
    assert not missing, f"add {missing} to LAYERS in {Path(__file__).name}: what may they import?"


def test_each_top_level_package_imports_only_the_layers_below_it(project):
    roots, _, graph = project
    violations, used = layering_violations(graph, roots, LAYERS, KNOWN_VIOLATIONS)
    assert not violations, "\n".join(violations)
    stale = sorted(set(KNOWN_VIOLATIONS) - used)
    if stale:
        warnings.warn(f"KNOWN_VIOLATIONS entries no import needs any more: {stale}",
                      stacklevel=2)


def test_the_compiler_backend_and_front_end_meet_only_in_the_ir(project):
    roots, modules, graph = project
    compiler_parts = {name for name, (_, is_package) in modules.items()
                      if is_package and name.count(".") == 2
                      and name.startswith("revasm.compiler.")}
    assert compiler_parts <= set(COMPILER_LAYERS), \
        f"add {sorted(compiler_parts - set(COMPILER_LAYERS))} to COMPILER_LAYERS"
    violations = part_violations(graph, COMPILER_LAYERS)
    assert not violations, "\n".join(violations)


def test_the_rtl_s_verification_and_synthesis_build_on_the_hardware_only(project):
    _, modules, graph = project
    rtl_modules = {name for name in modules if name.startswith("revasm.rtl.")}
    outside = sorted(name for name in rtl_modules
                     if not any(_within(name, part) for part in RTL_LAYERS))
    assert not outside, f"put {outside} in a part of RTL_LAYERS (hardware, verification, ...)"
    violations = part_violations(graph, RTL_LAYERS)
    assert not violations, "\n".join(violations)


def test_no_module_uses_a_private_name_of_a_third_party_package(project):
    _, modules, _ = project
    found = private_third_party_uses(modules)
    assert not found, ("private names of other packages (use their public API):\n"
                       + "\n".join(found))


def test_no_module_imports_a_private_name_of_another(project):
    _, modules, _ = project
    found = private_project_imports(modules)
    assert not found, ("private names imported from another module (make them public):\n"
                       + "\n".join(found))


def test_a_private_name_of_another_module_is_found(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from __future__ import annotations\n"
                                         "from ._own import public, __version__\n")
    (package / "_own.py").write_text("public = __version__ = _helper = 1\n")
    (package / "bad.py").write_text("from ._own import _helper\n"
                                    "def f():\n"
                                    "    from pkg._own import _helper as h\n"
                                    "    return h\n")
    assert private_project_imports(module_files(package, "pkg"), "pkg") == [
        "pkg.bad (line 1) imports ._own._helper",
        "pkg.bad (line 3) imports pkg._own._helper"]


def test_a_private_name_of_a_third_party_package_is_found(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from __future__ import annotations\n"  # the standard library's: not third-party
        "import os._private\n"
        "from amaranth import __version__\n"  # a dunder is public
        "from amaranth.hdl import Cat, Value\n"
        "from pkg._own import _helper\n"  # the project's own: another rule's business
        "from ._own import _other\n")
    (package / "_own.py").write_text("_helper = _other = 1\n")
    (package / "bad.py").write_text(
        "from amaranth.hdl._ast import Slice\n"
        "import amaranth.hdl._ir\n"
        "def f():\n"
        "    from amaranth.hdl import _ast as ast_module\n"
        "    import amaranth.hdl as hdl\n"
        "    return hdl._mem.MemoryData, amaranth.lib.data, ast_module\n")
    modules = module_files(package, "pkg")
    assert private_third_party_uses({"pkg": modules["pkg"]}, "pkg") == []
    assert private_third_party_uses(modules, "pkg") == [
        "pkg.bad (line 1) imports amaranth.hdl._ast.Slice",
        "pkg.bad (line 2) imports amaranth.hdl._ir",
        "pkg.bad (line 4) imports amaranth.hdl._ast",
        "pkg.bad (line 6) uses amaranth.hdl._mem.MemoryData",
    ]


def test_a_backend_import_of_the_front_end_fails():
    graph = {"c.backend.lower": {"c.frontend.checks": 25, "c.ir.nodes": 26, "x.isa": 3},
             "c.frontend.checks": {"c.ir.nodes": 4}, "c.ir.nodes": {"c.errors": 2},
             "c.api": {"c.backend.lower": 1, "c.frontend.checks": 2}}
    parts = {"c.errors": frozenset(), "c.ir": frozenset({"c.errors"}),
             "c.frontend": frozenset({"c.ir", "c.errors"}),
             "c.backend": frozenset({"c.ir", "c.errors"})}
    assert part_violations(graph, parts) == [
        "c.backend.lower (line 25) imports c.frontend.checks: c.backend may import only "
        "['c.errors', 'c.ir']"]
    del graph["c.backend.lower"]["c.frontend.checks"]
    assert part_violations(graph, parts) == []


def test_the_graph_sees_every_kind_of_import(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from .a import A\n")  # a package importing its own
    (package / "a.py").write_text("A = 1\ndef f():\n    from .sub import b\n")  # deferred
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("from .. import a\nimport pkg.sub.c as c\n")
    (package / "sub" / "c.py").write_text("from pkg import A\n")  # a name, not a module
    graph = import_graph(module_files(tmp_path / "pkg", "pkg"))
    assert {name: set(edges) for name, edges in graph.items()} == {
        "pkg": {"pkg.a"}, "pkg.a": {"pkg.sub.b"}, "pkg.sub": set(),
        "pkg.sub.b": {"pkg.a", "pkg.sub.c"}, "pkg.sub.c": {"pkg"}}
    assert graph["pkg.a"]["pkg.sub.b"] == 3
    assert cycles(graph) == [["pkg", "pkg.a", "pkg.sub.b", "pkg.sub.c", "pkg"]]


def test_a_cycle_fails_and_is_named():
    graph = {"x.a": {"x.b": 1}, "x.b": {"x.c": 2}, "x.c": {"x.a": 3, "x.d": 4},
             "x.d": {}, "x.e": {"x.e": 5}}
    found = cycles(graph)
    assert found == [["x.a", "x.b", "x.c", "x.a"]]
    assert "import cycle x.a -> x.b -> x.c -> x.a" in _describe(found[0], graph, {})
    assert cycles({"x.a": {"x.b": 1}, "x.b": {}}) == []


def test_a_forbidden_import_fails_unless_listed():
    roots = {"p.low": Path("low"), "p.high": Path("high")}
    layers = {"p.low": frozenset(), "p.high": frozenset({"p.low"})}
    graph = {"p.low.m": {"p.high.n": 7}, "p.high.n": {"p.low.m": 1}}
    violations, _ = layering_violations(graph, roots, layers, {})
    assert violations == ["p.low.m (line 7) imports p.high.n: p.low may import only nothing else"]
    violations, used = layering_violations(graph, roots, layers,
                                           {("p.low", "p.high.n"): "why"})
    assert violations == [] and used == {("p.low", "p.high.n")}
