"""Pack environments into single-file images (squashfs, SIF)."""
