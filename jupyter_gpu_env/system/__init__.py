"""What the package asks of the operating system besides subprocesses (``proc.py``): files replaced in
one rename (``atomic``), Python work on one thread off the event loop (``offloop``), files someone else
controls read bounded, regular files only, without waiting on a named pipe (``untrusted``), folders
removed whole whatever their modes (``trees``), and processes started ahead of need, waiting for their
request (``spare``, on ``proc``; ``proc``'s own child end of a tether is ``tether.py`` beside it), and
the Jupyter configuration files read as the server reads them, for what runs without it (``configfiles``),
and how the package's own processes start lean (``startup``)."""
