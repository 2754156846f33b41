"""Talking to the Kubernetes API server: the one client module (``client.py``), a namespace's calls,
Kueue's API and pods' logs."""
