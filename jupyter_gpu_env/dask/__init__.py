"""Dask clusters on the batch system, in a user's environment: the scheduler a batch job that keeps its own
workers (``incluster/``, copied into each cluster's folder), the server's records and view of them
(``service.py``), and how each backend starts, observes and stops one (``launchers.py`` and the
per-backend launchers)."""
