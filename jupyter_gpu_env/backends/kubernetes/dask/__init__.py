"""Dask clusters on the Kubernetes backend: the pure builders of what is created (``objects.py``) and the
launcher that creates, observes and deletes it (``launcher.py``). Workers are the keeper's business once
the scheduler runs (``pool.py``, copied into the cluster's keeper package)."""
