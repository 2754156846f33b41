"""The conda engine on py-rattler: ``engine`` in the server, ``worker`` in the child process that imports
py-rattler (never the server: see worker.py)."""
