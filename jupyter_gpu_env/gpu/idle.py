"""Idle detection: GPU memory held by this server's kernels while the GPU does nothing.

Utilization is what NVML reports per GPU; a MIG slice has none (NVML answers "not supported"), so on
MIG the warning cannot be raised and the state says so rather than guessing.
"""

from __future__ import annotations

from ..models.gpu import GpuSnapshot, IdleState

_BUSY_PERCENT = 1.0


class IdleTracker:
    def __init__(self, threshold_seconds: float) -> None:
        self.threshold = threshold_seconds
        self._since: float | None = None

    def update(self, snap: GpuSnapshot) -> IdleState:
        holders = [k.kernel_id for k in snap.kernels if (k.gpu_memory_bytes or 0) > 0]
        visible = [g for g in snap.gpus if g.visible]
        known = [g.utilization_percent for g in visible if g.utilization_percent is not None]
        if not holders:
            self._since = None
            return IdleState(idle=False, idle_seconds=0, threshold_seconds=self.threshold)
        if not known:
            self._since = None
            return IdleState(
                idle=False,
                idle_seconds=0,
                threshold_seconds=self.threshold,
                kernels=holders,
                message="GPU utilization is not reported for this device (MIG slices have none).",
            )
        if max(known) >= _BUSY_PERCENT:
            self._since = None
            return IdleState(idle=False, idle_seconds=0, threshold_seconds=self.threshold, kernels=holders)
        if self._since is None:
            self._since = snap.sampled_at
        idle_for = max(snap.sampled_at - self._since, 0.0)
        idle = idle_for >= self.threshold
        message = (
            f"Your kernels hold GPU memory but the GPU has been idle for {duration(idle_for)}. Release it "
            "so others can use it."
            if idle
            else ""
        )
        return IdleState(
            idle=idle,
            idle_seconds=round(idle_for, 1),
            threshold_seconds=self.threshold,
            kernels=holders,
            message=message,
        )


def duration(seconds: float) -> str:
    """``12 s``, ``3 min``, ``1 h 5 min``: a short idle time is counted in seconds, not as "0 min"."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    minutes = s // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h" + (f" {rest} min" if rest else "")
