"""The keeper: what runs inside a cluster's scheduler (``--preload gpuenv_dask.keeper``) and keeps its
workers. Copied into each cluster's folder as ``gpuenv_dask/`` and run with the environment's Python, so
it imports the standard library and ``distributed`` only, never ``jupyter_gpu_env``: the subprocess seam
(``proc``), the store and the server are not there. Its modules import each other relatively."""
