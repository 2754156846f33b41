"""The embedded default backend: the runner as a detached process on this machine."""

from .backend import LocalBackend

__all__ = ["LocalBackend"]
