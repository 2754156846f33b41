"""A `*.pipeline.yaml`'s text read into a request: its forms, its paths, its errors (pure)."""

from __future__ import annotations

import pytest

from jupyter_gpu_env.errors import InvalidRequest
from jupyter_gpu_env.pipelines.pipelinefile import is_pipeline_file, parse_text


def test_nodes_as_a_mapping_or_a_list_with_paths_relative_to_the_file():
    text = (
        "nodes:\n"
        "  prepare: data/prepare.ipynb\n"
        "  train:\n"
        "    notebook_path: ../shared/train.ipynb\n"
        "    after: [prepare]\n"
        "    sweep: {lr: [0.1, 0.01]}\n"
        "    resources: {gpus: 1, time_limit: '1:00:00'}\n"
        "    when: always\n"
    )
    request = parse_text(text, "project/nightly.pipeline.yaml")
    assert request.name == "nightly" and request.file_path == "project/nightly.pipeline.yaml"
    assert [(n.id, n.notebook_path, n.after, n.when) for n in request.nodes] == [
        ("prepare", "project/data/prepare.ipynb", [], "succeeded"),
        ("train", "shared/train.ipynb", ["prepare"], "always"),
    ]
    assert request.nodes[1].sweep == {"lr": [0.1, 0.01]} and request.nodes[1].resources.gpus == 1
    listed = parse_text("name: x\nnodes:\n  - {id: a, notebook_path: a.ipynb}\n", "x.pipeline.yml")
    assert listed.name == "x" and listed.nodes[0].notebook_path == "a.ipynb"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a\n- b\n", "must be a mapping with `name` and `nodes`"),
        ("nodes: [\n", "is not valid YAML (line 2)"),
        ("nodes:\n  a: {notebook_path: a.ipynb, after: prepare}\n", "after (node 1) must be a list"),
        ("nodes:\n  a: {notebook_path: a.ipynb, colour: red}\n", "colour"),
        ("nodes: {}\n", "nodes"),
        (
            "x: &a [1, 2]\n"
            + "".join(f"y{i}: &a{i} [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" for i in range(1))
            + "z: ["
            + ", ".join(["*a0"] * 30000)
            + "]\n",
            "too large a pipeline file",
        ),
    ],
)
def test_what_is_wrong_is_said_with_the_file_s_name(text, message):
    with pytest.raises(InvalidRequest) as e:
        parse_text(text, "p.pipeline.yaml")
    assert message in e.value.message and "p.pipeline.yaml" in e.value.message


def test_which_files_are_pipeline_files():
    assert is_pipeline_file("a.pipeline.yaml") and is_pipeline_file("A.Pipeline.YML")
    assert not is_pipeline_file("pipeline.yaml") and not is_pipeline_file("a.yaml")


def test_a_node_named_twice_is_refused_as_the_json_form_refuses_it():
    text = "nodes:\n  a: {notebook_path: a.ipynb}\n  b: b.ipynb\n  a: {notebook_path: c.ipynb}\n"
    with pytest.raises(InvalidRequest) as e:
        parse_text(text, "p.pipeline.yaml")
    assert "'p.pipeline.yaml' is not valid YAML (line 4)" in e.value.message
    assert "duplicate key 'a'" in e.value.message and e.value.status == 400
