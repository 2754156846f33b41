"""A batch kernel's job folder and wire, shared by the server and the kernel host on the node.

A batch kernel is a job whose runner hosts a Jupyter kernel instead of executing a notebook (the plan:
docs/plans/batch-kernels.md). The host and the server meet through two owner-only files in the job's
folder (``files``) and talk over one signed control channel (``wire``). Kept free of heavy imports: the
host imports it on the node.
"""
