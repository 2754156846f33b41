"""The one parser of environment files: what each format asks for, and a 400 naming the line for
anything it cannot honour."""

from __future__ import annotations

import pytest

from jupyter_gpu_env.envs.fromfile.specfile import parse
from jupyter_gpu_env.errors import InvalidRequest

ENVIRONMENT_YML = """\
name: analysis
channels:
  - conda-forge
  - nodefaults
dependencies:
  - python=3.11
  - numpy >=1.26
  - conda-forge::scipy
  - pip:
      - tabulate>=0.9
      - requests[socks]==2.32.*; python_version >= "3.8"
variables:
  OMP_NUM_THREADS: 4
"""


def test_environment_yml_conda_and_pip():
    f = parse("project/environment.yml", ENVIRONMENT_YML)
    assert f.kind == "environment.yml" and f.name == "analysis"
    # pip is added when the file has a pip section and does not name it
    assert f.conda == ["python=3.11", "numpy >=1.26", "scipy", "pip"]
    assert f.pip == ["tabulate>=0.9", 'requests[socks]==2.32.*; python_version >= "3.8"']
    assert f.channels == []  # the server's channels are used
    assert any("conda-forge" in i and "configured channels" in i for i in f.ignored)
    assert any("variables" in i for i in f.ignored)


def test_requirements_txt_gets_python_and_pip():
    text = "# data tools\ntabulate>=0.9  # tables\n\nsix \\\n  ==1.16.0\n"
    f = parse("requirements.txt", text)
    assert (f.kind, f.conda, f.pip) == (
        "requirements.txt",
        ["python", "pip"],
        ["tabulate>=0.9", "six==1.16.0"],
    )


def test_explicit_lock_pins_every_package_to_its_own_channel():
    text = """\
# platform: linux-64
@EXPLICIT
file:///srv/channel/linux-64/python-3.11.7-h_local_0.conda#sha256:abc
https://conda.anaconda.org/conda-forge/noarch/tabulate-0.9.0-pyhd8ed1ab_1.conda#0123
# Installed with pip, not representable here (use the environment.yml export):
#   six==1.16.0
"""
    f = parse("env.lock", text, ["file:///srv/channel/", "conda-forge"])
    assert f.kind == "explicit"
    assert f.conda == ["python ==3.11.7 h_local_0", "tabulate ==0.9.0 pyhd8ed1ab_1"]
    assert f.channels == ["file:///srv/channel", "https://conda.anaconda.org/conda-forge"]
    assert f.pip == ["six==1.16.0"]


@pytest.mark.parametrize(
    ("path", "text", "message"),
    [
        ("env.yml", "dependencies:\n  - numpy\n  - [nested]\n", "dependency 2: each dependency"),
        ("env.yml", "dependencies: [a\n", "line 2: not valid YAML"),
        ("env.yml", "name: x\n", "needs a `dependencies:` list"),
        (
            "env.yml",
            "dependencies:\n  - 'numpy; rm -rf /'\n",
            "dependency 1: 'numpy; rm -rf /' is not a package spec",
        ),
        ("env.yml", "dependencies:\n  - pip:\n    - 3\n", "pip entry 1: a PyPI requirement must be a string"),
        ("requirements.txt", "tabulate\n-e ./src\n", "line 2: '-e' is a pip option"),
        ("requirements.txt", "--index-url https://x\n", "line 1: '--index-url' is a pip option"),
        (
            "requirements.txt",
            "foo @ https://example.org/foo.whl\n",
            "line 1: 'foo @ https://example.org/foo.whl' installs from a URL",
        ),
        (
            "requirements.txt",
            "tabulate\nnot a requirement!\n",
            "line 2: 'not a requirement!' is not a PyPI requirement",
        ),
        ("requirements.txt", "# nothing\n", "lists no package"),
        (
            "lock.txt",
            "@EXPLICIT\nhttps://x/linux-64/oops.zip\n",
            "line 2: 'https://x/linux-64/oops.zip' is not a package URL",
        ),
        (
            "lock.txt",
            "https://x/linux-64/a-1-0.conda\n@EXPLICIT\n",
            "line 1: an explicit lock lists package URLs only after",
        ),
        ("notes.md", "hello\n", "is not a file an environment can be created from"),
    ],
)
def test_what_cannot_be_honoured_is_a_400_naming_the_place(path, text, message):
    with pytest.raises(InvalidRequest) as e:
        parse(path, text)
    assert message in str(e.value)
    assert e.value.status == 400


def test_aliases_count_by_what_they_expand_to():
    listed = ", ".join(f"p{i}" for i in range(300))
    expanding = f"x: &p [{listed}]\ndependencies:\n" + "".join("  - pip: *p\n" for _ in range(400))
    with pytest.raises(InvalidRequest, match=r"env.yml, its YAML: its aliases expand to more than") as e:
        parse("env.yml", expanding)
    assert e.value.reason == "invalid_file"
    # An anchor or two, as people write them, is fine.
    f = parse("env.yml", "x: &py python=3.11\ndependencies:\n  - *py\n  - pip:\n    - six\n")
    assert f.conda == ["python=3.11", "pip"] and f.pip == ["six"]


@pytest.mark.parametrize("depth", [65, 1000, 100_000])
def test_deep_nesting_is_refused_before_python_recursion(depth):
    for text in (
        "dependencies:\n  - " + "[" * depth + "]" * depth + "\n",
        "dependencies:\n  - " + "{a: " * depth + "b" + "}" * depth + "\n",
    ):
        with pytest.raises(InvalidRequest, match="env.yml, its YAML: it is nested deeper than 64 levels"):
            parse("env.yml", text)


def test_too_many_entries_are_refused_while_reading_not_after():
    many = "dependencies:\n" + "".join(f"  - p{i}\n" for i in range(2001))
    with pytest.raises(InvalidRequest, match="lists more than 2000 packages"):
        parse("env.yml", many)


def test_a_key_named_twice_is_refused_naming_it_and_its_line():
    text = "name: a\ndependencies:\n  - numpy\nname: b\ndependencies:\n  - scipy\n"
    with pytest.raises(InvalidRequest, match=r"env.yml, line 4: not valid YAML \(found duplicate key 'name'"):
        parse("env.yml", text)
