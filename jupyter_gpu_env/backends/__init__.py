"""The batch systems, one wing each (``local/``, ``slurm/``, ``kubernetes/``) holding every feature's code for
that system, over the contract (``base.py``) and what Dask hands a backend (``dask.py``). A backend knows no
feature; what a feature asks of it is in the contract and the ground floor's documents (``contracts/``)."""
