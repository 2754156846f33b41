"""Interactive kernels on the batch system: a kernel that runs as a batch job on a GPU node while its
notebook stays in JupyterLab (issue 39; the plan is docs/plans/batch-kernels.md).

Built so far: the node's side, ``host/`` — the process a kernel job runs, which starts the kernel,
says where it is and answers the server's control channel. The server's side (the provisioner, the
``batch-kernels`` API) comes next.
"""
