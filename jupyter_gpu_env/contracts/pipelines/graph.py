"""The graph of a pipeline, pure: its checks (unknown parents, cycles), an order where parents come
first, what lies below a node, and which waiting nodes can be decided now and how.

No I/O and no heavy imports: the server, the CLI and a node's runner (a Kubernetes pod creating the
children of the node that just ended) decide with the same code, so they never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

# How a node stands, as the deciders see it: held by the pipeline, handed to its backend, or ended.
WAITING, ACTIVE = "waiting", "active"
ENDED = frozenset({"succeeded", "failed", "cancelled", "skipped"})


@dataclass(frozen=True)
class Edge:
    """A node's parents and when it runs once they have ended."""

    after: tuple[str, ...]
    when: str = "succeeded"


class GraphError(ValueError):
    """What is wrong with the graph, naming the node: a message for the user."""


def order(nodes: Mapping[str, Edge], external: Iterable[str] = ()) -> list[str]:
    """The nodes in an order where each comes after its parents (``external`` nodes, jobs that exist
    already, count as parents of nobody's making); the given order where it allows. GraphError for a
    parent that names no node, a node its own parent, or a cycle (named in its order)."""
    known = set(nodes) | set(external)
    for node, edge in nodes.items():
        for parent in edge.after:
            if parent == node:
                raise GraphError(f"Node '{node}' names itself in 'after'.")
            if parent not in known:
                raise GraphError(f"Node '{node}' waits for '{parent}', which is no node of the pipeline.")
        if len(set(edge.after)) != len(edge.after):
            raise GraphError(f"Node '{node}' names a parent twice in 'after'.")
    done: list[str] = []
    placed: set[str] = set(external)
    state: dict[str, int] = {}  # 1: being placed (on the path), 2: placed

    for start in nodes:
        if state.get(start):
            continue
        # depth first without recursion: a 1,000-node chain is deeper than Python's stack allows
        path: list[tuple[str, int]] = [(start, 0)]
        state[start] = 1
        while path:
            node, i = path[-1]
            parents = nodes[node].after
            if i < len(parents):
                path[-1] = (node, i + 1)
                parent = parents[i]
                if parent in placed:
                    continue
                if state.get(parent) == 1:
                    cycle = [n for n, _ in path[[n for n, _ in path].index(parent) :]] + [parent]
                    raise GraphError(f"The nodes wait for each other in a cycle: {' → '.join(cycle)}.")
                if not state.get(parent):
                    state[parent] = 1
                    path.append((parent, 0))
                continue
            path.pop()
            state[node] = 2
            placed.add(node)
            done.append(node)
    return done


def below(nodes: Mapping[str, Edge], start: str) -> list[str]:
    """``start`` and every node that waits for it, directly or not, in the graph's order."""
    children: dict[str, list[str]] = {n: [] for n in nodes}
    for node, edge in nodes.items():
        for parent in edge.after:
            children.setdefault(parent, []).append(node)
    reached = {start}
    todo = [start]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in reached:
                reached.add(child)
                todo.append(child)
    return [n for n in order(nodes, set(children) - set(nodes)) if n in reached]


@dataclass(frozen=True)
class Decision:
    """A waiting node's fate once its parents have ended: ``run``, or ``skip`` and why, in words."""

    node: str
    run: bool
    why: str = ""


def decide(nodes: Mapping[str, Edge], standing: Mapping[str, str]) -> list[Decision]:
    """Every waiting node that can be decided now, in the graph's order: a node whose parents have all
    ended runs when they ended as its ``when`` asks and is skipped otherwise; a skip is an end, so the
    nodes below a skipped one are decided in the same call (a ``when: always`` node still runs).

    ``standing`` gives each node's :data:`WAITING`, :data:`ACTIVE` or ended state (a node left out is
    waiting; an external job is given by its key)."""
    now = dict(standing)
    decided: list[Decision] = []
    for node in order(nodes, [k for k in standing if k not in nodes]):
        if now.get(node, WAITING) != WAITING:
            continue
        edge = nodes[node]
        ends = [(p, now.get(p, WAITING)) for p in edge.after]
        if any(s not in ENDED for _, s in ends):
            continue
        why = refusal(edge.when, ends)
        decided.append(Decision(node, why is None, why or ""))
        now[node] = ACTIVE if why is None else "skipped"
    return decided


def refusal(when: str, ends: Sequence[tuple[str, str]]) -> str | None:
    """Why a node whose parents ended as ``ends`` (parent, state) must not run; None: it runs."""
    if when == "always":
        return None
    if when == "failed":
        if any(s == "failed" for _, s in ends):
            return None
        return "no upstream node failed" if len(ends) != 1 else f"upstream '{ends[0][0]}' did not fail"
    for parent, state in ends:
        if state != "succeeded":
            word = {"skipped": "was skipped", "cancelled": "was cancelled"}.get(state, state)
            return f"upstream '{parent}' {word}"
    return None
