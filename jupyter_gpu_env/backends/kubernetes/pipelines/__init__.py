"""Pipelines on Kubernetes: each node an ordinary Job (or a sweep's Indexed Job) that Kueue admits when it
is created, one step at a time. The server stages each held node's object beside its jobs
(:mod:`.stage`); the pod of a node that ends creates its children from those files (:mod:`.carry`), with
no Kubernetes client and no Jupyter server.
"""
