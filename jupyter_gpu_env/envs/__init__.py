"""Conda environments: discovery, clone, package changes, export, deletion.

The public entry point is :class:`jupyter_gpu_env.envs.service.EnvironmentService`. This package
file imports nothing on purpose: ``models.envs`` uses ``envs.syntax``, and an eager
import here would make that circular.
"""
