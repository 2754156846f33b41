"""An offline demo: a local conda channel built from this machine's CPython and pip wheels, and a
managed environment (python, ipykernel, pip) created from it with py-rattler.

Run ``python -m jupyter_gpu_env.demo build --channel DIR --env PREFIX``; the tests use the same code.
"""
