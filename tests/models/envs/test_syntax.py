import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from jupyter_gpu_env.errors import InvalidRequest
from jupyter_gpu_env.models.envs import KernelRequest, NewEnvironmentRequest
from jupyter_gpu_env.models.envs.packages import PackagesRequest
from jupyter_gpu_env.models.envs.syntax import (
    PIP_REQUIREMENT_PATTERN,
    check_pip_requirement,
    spec_name,
    validate_env_name,
)


@pytest.mark.parametrize("name", ["mine", "torch-2.3_cuda12", "A.b-c_d", "x" * 64, "base2"])
def test_valid_names(name):
    assert validate_env_name(name) == name


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "empty"),
        ("../x", "'/'"),
        ("..", ".."),
        ("a..b", ".."),
        ("/abs", "'/'"),
        ("a/b", "'/'"),
        ("a\\b", "'/'"),
        (".hidden", "start with"),
        ("-rf", "start with"),
        ("tab\there", "control"),
        ("nl\n", "control"),
        ("del\x7f", "control"),
        ("with space", "whitespace"),
        ("nbsp\u00a0x", "whitespace"),
        ("x" * 65, "65 characters"),
        ("naïve", "only contain"),
        ("a@b", "only contain"),
        ("semi;colon", "only contain"),
    ],
)
def test_invalid_names(name, why):
    with pytest.raises(InvalidRequest) as e:
        validate_env_name(name)
    assert e.value.status == 400
    assert why in e.value.message
    with pytest.raises(ValidationError):
        NewEnvironmentRequest(source="demo", name=name)


def test_clone_request_rejects_unknown_fields():
    with pytest.raises(ValidationError):
        NewEnvironmentRequest(source="demo", name="ok", force=True)


@pytest.mark.parametrize(
    "spec",
    [
        "tensorboard",
        "numpy >=1.26",
        "numpy>=1.26,<2",
        "scipy=1.13",
        "scipy=1.13=py311*",
        "pip ==24.0",
        "python 3.11.*",
        "libgcc-ng",
    ],
)
def test_specs_accepted(spec):
    assert PackagesRequest(add=[spec]).add == [spec]


@pytest.mark.parametrize(
    "spec",
    [
        "",
        " ",
        "conda-forge::numpy",
        "numpy; rm -rf /",
        "https://x/y.conda",
        "-e .",
        "numpy[version='>=1']",
        "a\nb",
        "x" * 201,
        "$(id)",
    ],
)
def test_specs_refused(spec):
    with pytest.raises(ValidationError):
        PackagesRequest(add=[spec])


def test_packages_request_needs_something_and_names_only_to_remove():
    with pytest.raises(ValidationError, match="nothing to do"):
        PackagesRequest()
    with pytest.raises(ValidationError):
        PackagesRequest(remove=["numpy >=1"])
    assert PackagesRequest(remove=["NumPy"]).remove == ["numpy"]
    assert spec_name("NumPy >=1.2") == "numpy"


def test_kernel_request_display_name():
    assert KernelRequest().display_name is None
    assert KernelRequest(display_name="  GPU torch ").display_name == "GPU torch"
    for bad in ["", "   ", "a\x00b", "x" * 101]:
        with pytest.raises(ValidationError):
            KernelRequest(display_name=bad)


@settings(max_examples=500, suppress_health_check=list(HealthCheck), deadline=None)
@given(st.from_regex(PIP_REQUIREMENT_PATTERN, fullmatch=True).filter(lambda s: len(s) <= 200))
def test_every_pypi_requirement_the_document_allows_is_accepted(requirement):
    """The published pattern is a subset of PEP 508 that `packaging` reads: no valid request is a 400."""
    assert check_pip_requirement(requirement) == requirement.strip()


@pytest.mark.parametrize(
    "bad", ["-e .", "foo @ https://x/y.whl", "x==1.0.dev1.*", "x~=1", "x>=1.0.*", "x; os_name"]
)
def test_pypi_requirements_beyond_an_index_are_refused(bad):
    with pytest.raises(ValueError, match="not a PyPI requirement this server accepts"):
        check_pip_requirement(bad)


@pytest.mark.parametrize("field", ["add", "remove", "pip_add", "pip_remove"])
def test_a_spec_longer_than_the_document_allows_is_refused_blanks_and_all(field):
    """The document's maxLength counts what is sent; blanks stripped afterwards do not make it shorter."""
    padded = " " * 195 + "numpy"  # 200 characters: the limit
    PackagesRequest.model_validate({field: [padded]})
    with pytest.raises(ValueError):
        PackagesRequest.model_validate({field: [" " + padded]})
