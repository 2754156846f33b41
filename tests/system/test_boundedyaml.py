"""The one YAML reader of files users write: a mapping that names a key twice is refused, naming the
key and both lines, since YAML's readers would otherwise keep the last silently."""

from __future__ import annotations

import pytest
import yaml  # type: ignore[import-untyped]

from jupyter_gpu_env.system.boundedyaml import load_yaml


def test_a_key_named_twice_is_refused_with_its_name_and_lines():
    text = "nodes:\n  a: {notebook_path: a.ipynb}\n  b: b.ipynb\n  a: {notebook_path: c.ipynb}\n"
    with pytest.raises(yaml.YAMLError) as e:
        load_yaml(text, 32, 1000)
    assert e.value.problem_mark.line + 1 == 4
    assert "duplicate key 'a'" in e.value.problem and "line 2" in e.value.problem


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",  # top level
        "x: [{k: 1, k: 2}]\n",  # flow mapping in a list
        "x:\n  - k: 1\n    j: 2\n    k: 3\n",  # block mapping in a list
        "1: a\n1.0: b\n",  # equal once read: the same key of the dict
        "? [a]\n: 1\nb: 2\nb: 3\n",  # a complex key elsewhere does not hide it
    ],
)
def test_every_mapping_refuses_a_repeated_key(text):
    with pytest.raises(yaml.YAMLError, match="duplicate key"):
        load_yaml(text, 32, 1000)


def test_merge_keys_still_let_a_mapping_override_what_it_merges():
    text = "base: &b {lr: 0.1, epochs: 3}\nrun:\n  <<: *b\n  lr: 0.01\n"
    assert load_yaml(text, 32, 1000)["run"] == {"lr": 0.01, "epochs": 3}
    twice = "base: &b {lr: 0.1}\nrun:\n  <<: *b\n  lr: 0.01\n  lr: 0.02\n"
    with pytest.raises(yaml.YAMLError, match="duplicate key 'lr'"):
        load_yaml(twice, 32, 1000)
