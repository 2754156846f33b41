"""The Kubernetes backend (``backend.KubernetesBackend``, which needs the ``kubernetes`` extra): its options,
the pure Job builder, the status readers, Kueue and the API client (``api/``), and every feature's
Kubernetes half: sweeps, schedules (CronJobs), pipelines, Dask clusters, the cluster's capacity.

Nothing is imported here, so that ``client`` can be used without the kubernetes package installed.
"""
