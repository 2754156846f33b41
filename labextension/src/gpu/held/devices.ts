/**
 * What this server holds: the GPUs and MIG slices its CUDA_VISIBLE_DEVICES
 * admits, and their memory over time. Pure functions, no DOM.
 */
import { IGpuDevice, IMigDevice } from '../../api/types';
import { IHistoryPoint } from '../../api/types';

/** A device this server can use: a MIG slice or a whole GPU. */
export type HeldDevice =
  | { kind: 'mig'; gpu: IGpuDevice; mig: IMigDevice }
  | { kind: 'gpu'; gpu: IGpuDevice };

/** The visible MIG slices of MIG-enabled GPUs, and the visible whole GPUs. */
export function heldDevices(gpus: IGpuDevice[]): HeldDevice[] {
  const held: HeldDevice[] = [];
  for (const gpu of gpus) {
    if (!gpu.visible) {
      continue;
    }
    if (gpu.mig_enabled) {
      for (const mig of gpu.mig_devices) {
        if (mig.visible) {
          held.push({ kind: 'mig', gpu, mig });
        }
      }
    } else {
      held.push({ kind: 'gpu', gpu });
    }
  }
  return held;
}

/** The key of a device in `GET gpu/history` (its UUID, else `gpu<index>`). */
export function historyKey(device: HeldDevice): string | null {
  if (device.kind === 'mig') {
    return device.mig.uuid;
  }
  return device.gpu.uuid ?? `gpu${device.gpu.index}`;
}

/**
 * The devices whose memory adds up without counting twice: compute
 * instances sharing a GPU instance report the same (shared) memory.
 */
function distinctMemory(held: HeldDevice[]): HeldDevice[] {
  const seen = new Set<string>();
  return held.filter(device => {
    if (device.kind !== 'mig' || device.mig.gpu_instance_id === null) {
      return true;
    }
    const key = `${device.gpu.index}/${device.mig.gpu_instance_id}`;
    if (seen.has(key)) {
      return false;
    }
    seen.add(key);
    return true;
  });
}

function memoryOf(device: HeldDevice): {
  used: number | null;
  total: number | null;
} {
  const source = device.kind === 'mig' ? device.mig : device.gpu;
  return { used: source.memory_used_bytes, total: source.memory_total_bytes };
}

/** Memory used and available on everything held; null where not reported. */
export function heldMemory(
  held: HeldDevice[]
): { used: number; total: number } | null {
  let used = 0;
  let total = 0;
  for (const device of distinctMemory(held)) {
    const memory = memoryOf(device);
    if (memory.used === null || memory.total === null) {
      return null;
    }
    used += memory.used;
    total += memory.total;
  }
  return held.length > 0 && total > 0 ? { used, total } : null;
}

/** One value of a sparkline: Unix seconds and the amount. */
export interface ISeriesPoint {
  t: number;
  value: number;
}

/** Host memory used over time. */
export function hostSeries(points: IHistoryPoint[]): ISeriesPoint[] {
  return points.map(p => ({ t: p.t, value: p.host_memory_used_bytes }));
}

/**
 * GPU memory used on the held devices over time; samples missing a device
 * (or its figure) are left out rather than drawn as zero.
 */
export function heldSeries(
  points: IHistoryPoint[],
  held: HeldDevice[]
): ISeriesPoint[] {
  const keys = distinctMemory(held).map(historyKey);
  if (keys.length === 0 || keys.some(key => key === null)) {
    return [];
  }
  const series: ISeriesPoint[] = [];
  for (const point of points) {
    let value = 0;
    let complete = true;
    for (const key of keys) {
      const used = point.devices?.[key as string]?.memory_used_bytes;
      if (used === null || used === undefined) {
        complete = false;
        break;
      }
      value += used;
    }
    if (complete) {
      series.push({ t: point.t, value });
    }
  }
  return series;
}
