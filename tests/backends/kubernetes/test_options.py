"""c.KubernetesBackend: what the backend makes of its configuration, and what it refuses at start."""

from __future__ import annotations

import os

import pytest
from traitlets.config import Config

from jupyter_gpu_env.backends.kubernetes.backend import KubernetesBackend


def build(**options):
    return KubernetesBackend("k8s", config=Config({"KubernetesBackend": options}))


def test_the_servers_own_image_user_and_ids_by_default(monkeypatch):
    monkeypatch.setenv("JUPYTER_IMAGE_SPEC", "registry.example.com/hub/gpu-notebook:2024.05")
    monkeypatch.setenv("JUPYTERHUB_USER", "alice@example.com")
    backend = build(
        volumes=[{"name": "home", "persistentVolumeClaim": {"claimName": "claim-alice"}}],
        volume_mounts=[{"name": "home", "mountPath": "/home/jovyan"}],
        local_queue="team-a",
        queues=["gpu-large"],
        mig_profiles=["1g.10gb", "3g.40gb"],
        max_time_limit=7200,
        default_memory="4G",
    )
    s = backend.settings
    assert s.image == "registry.example.com/hub/gpu-notebook:2024.05"
    assert s.user == "alice@example.com" and s.backend_name == "k8s"
    assert (s.run_as_user, s.run_as_group) == (os.getuid(), os.getgid())
    assert s.default_memory_bytes == 4 << 30
    info = backend.info()
    assert info.name == "k8s" and info.kind == "kubernetes"
    assert info.queues == ["team-a", "gpu-large"] and info.default_queue == "team-a"
    assert info.mig_profiles == ["1g.10gb", "3g.40gb"] and info.limits.max_time_limit_seconds == 7200


def test_an_explicit_image_wins_and_ids_can_be_left_to_the_image(monkeypatch):
    monkeypatch.setenv("JUPYTER_IMAGE_SPEC", "from-env")
    backend = build(image="explicit:1", run_as_server_user=False)
    assert backend.settings.image == "explicit:1" and backend.settings.run_as_user is None


def test_bad_configuration_stops_the_start_with_every_reason(monkeypatch):
    monkeypatch.delenv("JUPYTER_IMAGE_SPEC", raising=False)
    monkeypatch.delenv("JUPYTER_IMAGE", raising=False)
    with pytest.raises(ValueError) as e:
        build(
            volumes=[{"name": "home", "persistentVolumeClaim": {"claim_name": "x"}}],
            volume_mounts=[{"name": "other", "mountPath": "/home/jovyan"}],
            tolerations=[{"operator": "Exists", "effect": "NoSchedulee", "tolerationSeconds": "soon"}],
        )
    text = str(e.value)
    assert text.startswith("c.KubernetesBackend: ")
    assert "no image" in text and "JUPYTER_IMAGE_SPEC" in text
    # Client 37 (pydantic models) names the unknown key; older clients, the missing claimName.
    assert "volumes[0] " in text and "claim_name" in text
    assert "volume_mounts names volume 'other'" in text
    assert "tolerations[0] is not a valid Toleration" in text


def test_every_option_has_help():
    for name, trait in KubernetesBackend.class_traits(config=True).items():
        assert len((trait.help or "").split()) >= 5, f"c.KubernetesBackend.{name} needs help text"
