"""Our rewrite of package records writes exactly what conda-pack's ``rewrite_conda_meta`` writes."""

from __future__ import annotations

import json

import pytest
from conda_pack.core import rewrite_conda_meta

from jupyter_gpu_env.images import records


def test_every_record_of_a_real_environment_comes_out_as_conda_packs(demo):
    names = sorted((demo.env / "conda-meta").glob("*.json"))
    assert len(names) > 10
    for path in names:
        ours, data = records.rewrite(str(path))
        theirs, their_data = rewrite_conda_meta(str(path))
        assert ours == theirs, path.name
        assert data == their_data
        assert data.get("extracted_package_dir", "") == ""  # the local paths are gone


AWKWARD = {
    "name": "ünïcode-\u2603-\U0001f600",
    "escapes": 'quote " backslash \\ tab \t newline \n nul \0 bell \x07',
    "numbers": [0, -1, 2**70, 1.5, -0.0, 1e-300, 1e300, 0.1, float("nan"), float("inf"), float("-inf")],
    "flags": [True, False, None],
    "empty": {"list": [], "dict": {}, "string": ""},
    "nested": [[[]], [{}], [[1, [2, {"z": 1, "a": [3]}]]]],
    "b": {"y": 1, "x": 2, "Z": 3, "_": 4, "10": 5, "9": 6},
    "link": {"source": "/opt/conda/pkgs/x-1.0-0", "type": 1},
    "extracted_package_dir": "/opt/conda/pkgs/x-1.0-0",
    "package_tarball_full_path": "/opt/conda/pkgs/x-1.0-0.conda",
}


def test_awkward_values_come_out_as_conda_packs(tmp_path):
    path = tmp_path / "x-1.0-0.json"
    path.write_text(json.dumps(AWKWARD, ensure_ascii=False))
    ours, _ = records.rewrite(str(path))
    theirs, _ = rewrite_conda_meta(str(path))
    assert ours == theirs
    assert b'"source": ""' in ours and b"/opt/conda" not in ours


@pytest.mark.parametrize("value", [[], {}, "", 0, 1.25, None, True, "\u00e9", [1, [2]], {"a": {}}])
def test_any_decoded_value_is_spelled_as_json_dumps_spells_it(value):
    assert records.dumps(value) == json.dumps(value, indent=True, sort_keys=True)


def test_a_record_without_link_or_local_paths_is_only_reformatted(tmp_path):
    path = tmp_path / "r.json"
    path.write_text('{"name": "r", "link": null, "files": ["a", "b"]}')
    ours, data = records.rewrite(str(path))
    assert ours == rewrite_conda_meta(str(path))[0]
    assert data == {"name": "r", "link": None, "files": ["a", "b"]}
