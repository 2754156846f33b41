"""Kernels this extension starts elsewhere: batch kernels, registered kernelspecs whose kernel runs as a job."""
