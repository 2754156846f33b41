"""`GET gpu-env/api/gpu` latency against Jupyter Server's own `GET api/status`, measured in one run.

The ratio says what our endpoint costs beyond the cheapest authenticated request the same server
answers. Sequential p50/p99, then 50 callers firing together (50 open tabs polling at once).
"""

from __future__ import annotations

import asyncio

from _server import jupyter_server, latencies, summary

N = 400


async def measure(server) -> dict[str, dict[str, float]]:
    await latencies(server, "/gpu-env/api/gpu", 20)  # warm-up: first sample, imports
    await latencies(server, "/api/status", 20)
    return {
        "gpu sequential": summary(await latencies(server, "/gpu-env/api/gpu", N)),
        "status sequential": summary(await latencies(server, "/api/status", N)),
        "gpu 50 together": summary(await latencies(server, "/gpu-env/api/gpu", N, concurrency=50)),
        "status 50 together": summary(await latencies(server, "/api/status", N, concurrency=50)),
    }


def main() -> list[str]:
    with jupyter_server() as server:
        r = asyncio.run(measure(server))
    lines = [f"{'case':<22}{'p50 ms':>9}{'p99 ms':>9}"]
    lines += [f"{k:<22}{v['p50']:>9.2f}{v['p99']:>9.2f}" for k, v in r.items()]
    for mode in ("sequential", "50 together"):
        g, s = r[f"gpu {mode}"], r[f"status {mode}"]
        lines.append(
            f"ratio gpu/status {mode}: p50 {g['p50'] / s['p50']:.2f}x, p99 {g['p99'] / s['p99']:.2f}x"
        )
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
