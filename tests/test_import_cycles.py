"""No import cycles in the project's packages, imports inside functions and type-only imports included.

The import graph is built with grimp (the library import-linter uses), which reads every import statement
in a module: at the top, inside functions, under `if TYPE_CHECKING:`. A cycle is a strongly connected
component of that graph with more than one module; the test names the modules of each, with the lines
that close the loop, so the fix can start at once. Fix a cycle by moving the shared types down a layer,
by injecting the dependency, or by a registry — not by hiding the import.

A second test builds a small package with two modules that import each other (one of them inside a
function) and checks that the same function finds it, so the contract cannot pass by seeing nothing.
"""

from __future__ import annotations

import grimp

PACKAGES = ("app", "assistant_core", "harness", "speech", "training", "phonebuddy")


def import_cycles(*packages: str) -> tuple[list[list[str]], grimp.ImportGraph]:
    """The import cycles among `packages` (importable names), each a sorted list of modules, largest first;
    and the graph they were found in."""
    graph = grimp.build_graph(*packages, cache_dir=None)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    return [sorted(c) for c in sorted(_components(edges), key=len, reverse=True) if len(c) > 1], graph


def _components(edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, without recursion (the graph has ~500 modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
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
                found.append(component)
    return found


def describe(cycle: list[str], graph) -> str:
    """The modules of a cycle and the import lines between them."""
    members = set(cycle)
    lines = [f"cycle of {len(cycle)} modules: {', '.join(cycle)}"]
    for importer in cycle:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
            at = [d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported)]
            lines.append(f"    {importer} -> {imported} (line {', '.join(map(str, at))})")
    return "\n".join(lines)


def test_the_project_has_no_import_cycles():
    cycles, graph = import_cycles(*PACKAGES)
    # The graph really holds imports made inside functions (app.main opens the self-check lazily).
    assert "app.selfcheck" in graph.find_modules_directly_imported_by("app.main")
    assert not cycles, "\n".join(describe(c, graph) for c in cycles)


def test_a_cycle_added_on_purpose_is_found(tmp_path, monkeypatch):
    package = tmp_path / "cyclepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from cyclepkg import b\n\nVALUE = 1\n")
    (package / "b.py").write_text("def later():\n    from cyclepkg.a import VALUE  # hidden in a function\n\n"
                                  "    return VALUE\n")
    (package / "c.py").write_text("from cyclepkg import a\n")  # imports into the cycle, not part of it
    monkeypatch.syspath_prepend(str(tmp_path))
    cycles, graph = import_cycles("cyclepkg")
    assert cycles == [["cyclepkg.a", "cyclepkg.b"]]
    text = describe(cycles[0], graph)
    assert "cyclepkg.b -> cyclepkg.a (line 2)" in text and "cyclepkg.a -> cyclepkg.b (line 1)" in text
    (package / "b.py").write_text("VALUE = 2\n")  # the loop broken: nothing found
    assert import_cycles("cyclepkg")[0] == []
