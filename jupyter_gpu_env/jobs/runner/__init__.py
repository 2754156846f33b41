"""What runs on the node (``python -m jupyter_gpu_env.runner``): papermill with progress, heartbeat,
status and GPU use. Kept empty of imports: it must start fast on a compute node.
"""
