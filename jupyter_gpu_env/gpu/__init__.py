"""The GPU side: readings (sources/), MIG and visibility, the sampler and its history, kernels' processes,
host memory against the container's limit, cluster capacity, and the environment GPU check."""
