"""The keeper: what runs inside a cluster's scheduler and keeps its workers. Copied into each cluster's
folder as ``gpuenv_dask/`` and run with the environment's Python (``python -m gpuenv_dask.scheduler``
starts the scheduler with the cluster's mutual TLS and preloads ``gpuenv_dask.keeper``), so it imports
the standard library and ``distributed`` only, never ``jupyter_gpu_env``: the subprocess seam
(``proc``), the store and the server are not there. Its modules import each other relatively."""
