"""The pipeline graph's pure rules: order, cycles, what lies below, who runs or is skipped and why."""

from __future__ import annotations

import pytest

from jupyter_gpu_env.contracts.pipelines.graph import (
    ACTIVE,
    Decision,
    Edge,
    GraphError,
    below,
    decide,
    order,
    refusal,
)

DIAMOND = {
    "prepare": Edge(()),
    "train": Edge(("prepare",)),
    "check": Edge(("prepare",)),
    "report": Edge(("train", "check")),
}


def test_order_puts_parents_first_keeping_the_given_order_where_it_may():
    assert order(DIAMOND) == ["prepare", "train", "check", "report"]
    shuffled = {k: DIAMOND[k] for k in ("report", "check", "train", "prepare")}
    got = order(shuffled)
    assert got.index("prepare") < got.index("train") < got.index("report") and got.index("check") < got.index(
        "report"
    )


def test_a_long_chain_is_ordered_without_recursion():
    chain = {f"n{i}": Edge((f"n{i - 1}",) if i else ()) for i in range(5000)}
    assert order(chain) == [f"n{i}" for i in range(5000)]


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ({"a": Edge(("b",))}, "Node 'a' waits for 'b', which is no node of the pipeline."),
        ({"a": Edge(("a",))}, "Node 'a' names itself in 'after'."),
        ({"a": Edge(()), "b": Edge(("a", "a"))}, "Node 'b' names a parent twice in 'after'."),
        (
            {"a": Edge(("c",)), "b": Edge(("a",)), "c": Edge(("b",))},
            "The nodes wait for each other in a cycle: a → c → b → a.",
        ),
    ],
)
def test_what_is_wrong_with_a_graph_is_said_naming_the_nodes(nodes, message):
    with pytest.raises(GraphError) as e:
        order(nodes)
    assert str(e.value) == message


def test_external_jobs_are_parents_of_no_one_s_making():
    assert order({"next": Edge(("earlier",))}, ["earlier"]) == ["next"]


def test_below_is_the_node_and_its_descendants_in_order():
    assert below(DIAMOND, "train") == ["train", "report"]
    assert below(DIAMOND, "prepare") == ["prepare", "train", "check", "report"]
    assert below(DIAMOND, "report") == ["report"]


def test_decide_runs_nodes_whose_parents_ended_as_asked_and_cascades_skips():
    assert decide(DIAMOND, {}) == [Decision("prepare", True)]
    assert decide(DIAMOND, {"prepare": ACTIVE}) == []
    assert decide(DIAMOND, {"prepare": "succeeded"}) == [Decision("train", True), Decision("check", True)]
    assert decide(DIAMOND, {"prepare": "succeeded", "train": "succeeded", "check": ACTIVE}) == []
    assert decide(DIAMOND, {"prepare": "failed"}) == [
        Decision("train", False, "upstream 'prepare' failed"),
        Decision("check", False, "upstream 'prepare' failed"),
        Decision("report", False, "upstream 'train' was skipped"),
    ]
    handlers = {**DIAMOND, "alert": Edge(("prepare",), "failed"), "tidy": Edge(("report",), "always")}
    decided = {d.node: d for d in decide(handlers, {"prepare": "failed"})}
    assert decided["alert"].run and decided["tidy"].run and not decided["report"].run
    assert decide(
        handlers, {"prepare": "succeeded", "train": "succeeded", "check": "succeeded", "report": "succeeded"}
    ) == [
        Decision("alert", False, "upstream 'prepare' did not fail"),
        Decision("tidy", True),
    ]


def test_refusal_words():
    assert refusal("succeeded", [("a", "succeeded"), ("b", "cancelled")]) == "upstream 'b' was cancelled"
    assert refusal("failed", [("a", "succeeded"), ("b", "succeeded")]) == "no upstream node failed"
    assert refusal("failed", [("a", "succeeded"), ("b", "failed")]) is None
    assert refusal("always", [("a", "skipped")]) is None
