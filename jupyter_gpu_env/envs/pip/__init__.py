"""PyPI packages in a conda environment: the installer (uv where it is available, else the
environment's own pip), installs and removals inside a transaction's copy, and dry-run plans."""
