/**
 * The pure rules of the submit dialog's resource fields: what is sent from
 * what was typed, and how a backend's free capacity reads.
 */
import type { ICapacityRow, IResourceRequest } from '../../api/types';

/** The resource fields as typed (`mig_profile`: the chosen option or ''). */
export interface IResourceTexts {
  cpus: string;
  memory: string;
  gpus: string;
  time_limit: string;
  mig_profile: string;
}

/**
 * The request from the typed fields: empty ones are left to the backend;
 * whole GPUs or a MIG slice, never both, and only what the backend offers.
 */
export function readResources(
  texts: IResourceTexts,
  offered: { gpus: boolean; mig: boolean }
): IResourceRequest {
  const result: IResourceRequest = {};
  const cpus = texts.cpus.trim();
  const memory = texts.memory.trim();
  const gpus = texts.gpus.trim();
  const timeLimit = texts.time_limit.trim();
  if (cpus) {
    result.cpus = Number(cpus);
  }
  if (memory) {
    result.memory = memory;
  }
  if (!texts.mig_profile && gpus && offered.gpus) {
    result.gpus = Number(gpus);
  }
  if (texts.mig_profile && offered.mig) {
    result.mig_profile = texts.mig_profile;
  }
  if (timeLimit) {
    result.time_limit = timeLimit;
  }
  return result;
}

/** `1g.10gb: 3 free of 7`, `NVIDIA-H100: 2 free of 8`, `GPUs: 2 free of 8`. */
export function describeCapacity(row: ICapacityRow): string {
  const what = row.profile ?? (row.gpu_model || 'GPUs');
  return `${what}: ${row.free} free of ${row.total}`;
}

/** Free MIG slices per profile, summed over the nodes' rows. */
export function freeByProfile(rows: ICapacityRow[]): Map<string, number> {
  const free = new Map<string, number>();
  for (const row of rows) {
    if (row.profile) {
      free.set(row.profile, (free.get(row.profile) ?? 0) + row.free);
    }
  }
  return free;
}

/** A MIG option's label: how many are free, when that is known. */
export function profileLabel(
  profile: string,
  free: number | undefined
): string {
  if (free === undefined) {
    return profile;
  }
  return free === 0
    ? `${profile} (none free: queues)`
    : `${profile} (${free} free)`;
}
