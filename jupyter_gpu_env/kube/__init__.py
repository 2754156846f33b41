"""The Kubernetes API client shared by the Kubernetes backend and the cluster capacity view."""
