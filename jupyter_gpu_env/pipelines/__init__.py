"""Notebooks run as a graph: a pipeline checked whole, its jobs and sweeps made, handed to their backends
as far as each holds dependencies, moved on by the server's timer elsewhere (``service.py``)."""
