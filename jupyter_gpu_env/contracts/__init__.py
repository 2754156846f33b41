"""The ground floor: what lives on shared storage and passes between the server and a node (job, schedule,
pipeline and Dask cluster folders, the keeper copied into a cluster) and the database every feature keeps
its part of. It imports nothing above ``models/``, ``errors.py`` and ``system/``."""
