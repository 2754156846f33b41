"""Dask clusters on SLURM: the scheduler a small batch job, its workers a job array the keeper submits
(``contracts/dask/keeper/slurmpool.py``); the pure script builders (``script.py``) and the server's launcher
(``launcher.py``), which talks to SLURM through the backend's controller."""
