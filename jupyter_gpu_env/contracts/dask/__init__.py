"""A Dask cluster's folder, the contract between the server and the cluster: its spec, how it is built,
the keeper's state, and the keeper itself (``keeper/``, copied into each cluster's folder)."""
