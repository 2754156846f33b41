"""Dask clusters on SLURM: the scheduler a small batch job, its workers a job array the keeper submits
(``pool.py``, copied into the cluster's keeper package); the pure script builders (``script.py``) and the server's launcher
(``launcher.py``), which talks to SLURM through the backend's controller."""
