"""The window's modules are in no import cycle (imports inside functions and under TYPE_CHECKING included, as
grimp reads them): the window (app.main_window and its parts) imports the runner, the events, the phone and
the settings flow, and none of them imports the window back."""

from __future__ import annotations

import grimp

# app.main and app.selfcheck (the command line's self-check) still import each other; issue 26's cycle
# contract over every package names them. Nothing else in app/ may be in a cycle.
KNOWN = {frozenset({"app.main", "app.selfcheck"})}


def _cycles(graph: grimp.ImportGraph, package: str) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    edges = {m: sorted(i for i in graph.find_modules_directly_imported_by(m) if i in modules) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = 0
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            recurse = False
            for j in range(i, len(edges[node])):
                nxt = edges[node][j]
                if nxt not in index:
                    work.append((node, j + 1))
                    work.append((nxt, 0))
                    recurse = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if recurse:
                continue
            if low[node] == index[node]:
                component = set()
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.add(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_the_window_modules_are_in_no_import_cycle():
    graph = grimp.build_graph("app", include_external_packages=False)
    cycles = [c for c in _cycles(graph, "app") if frozenset(c) not in KNOWN]
    assert cycles == []


def test_a_cycle_added_on_purpose_is_found():
    graph = grimp.build_graph("app", include_external_packages=False)
    graph.add_import(importer="app.runner", imported="app.main_window")  # the import this change removed
    cycles = [c for c in _cycles(graph, "app") if frozenset(c) not in KNOWN]
    assert any({"app.runner", "app.main_window"} <= c for c in cycles), cycles
