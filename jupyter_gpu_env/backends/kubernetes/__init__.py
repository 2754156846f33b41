"""The Kubernetes backend (``backend.KubernetesBackend``, which needs the ``kubernetes`` extra): its options,
the pure Job builder, the status readers, Kueue, and the client module gpu/cluster.py shares.

Nothing is imported here, so that ``client`` can be used without the kubernetes package installed.
"""
