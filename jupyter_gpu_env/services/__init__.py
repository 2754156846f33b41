"""What a server holds, and the one seam its handlers call: ``self.services.<resource>.<verb>(...)``.

:class:`Library` is what needs no server (environments, images, jobs and sweeps): the command line
runs on it. :class:`Services` is the server's: each REST resource is one attribute with that
resource's verbs, so a handler's call names one resource and one verb, and mypy follows it into the
service. Where a verb needs more than the library (a long operation as a task, the server's kernels,
the GPU sampler) the resource is a small class of this package that composes what it needs
(``environments``, ``images``, ``gpu``); where it does not, it is the library's own service (``jobs``,
``sweeps``, ``tasks``).
"""

from .library import Library
from .server import Services

__all__ = ["Library", "Services"]
