"""Conda environments: discovery, clone, package changes, export, deletion.

The public entry point is :class:`jupyter_gpu_env.envs.service.EnvironmentService`.
"""
