/**
 * Where the MIG GPU instances of a GPU sit among its memory slices, for the
 * slot diagram. Pure functions, no DOM.
 *
 * A100, H100, H200 and B200 have 8 memory slices (and 7 compute slices); A30
 * has 4. A GPU instance spans `placement_size` slices from `placement_start`
 * where the driver reported them (`nvidia-smi mig -lgi`, NVML); otherwise it
 * is drawn in device order, its size from its memory or its profile.
 */
import { IGpuDevice, IMigDevice } from '../../api/types';

/** `1g.10gb` → compute 1, memory `10gb`; `1c.3g.71gb` → ci 1 of gi 3. */
export interface IProfileParts {
  /** Compute slices of a compute instance sharing its GPU instance. */
  ci: number | null;
  /** Compute slices of the GPU instance. */
  gi: number;
  /** The memory part, e.g. `10gb` (with any suffix such as `+me`). */
  memory: string;
}

const PROFILE = /^(?:(\d+)c\.)?(\d+)g\.(\d+gb.*)$/i;

export function parseProfile(profile: string | null): IProfileParts | null {
  const match = profile ? PROFILE.exec(profile.trim()) : null;
  if (!match) {
    return null;
  }
  return {
    ci: match[1] ? Number(match[1]) : null,
    gi: Number(match[2]),
    memory: match[3]
  };
}

/** The GPU instance's profile of a device: `1c.3g.71gb` → `3g.71gb`. */
export function instanceProfile(profile: string | null): string | null {
  const parts = parseProfile(profile);
  return parts ? `${parts.gi}g.${parts.memory}` : profile;
}

/** A compute instance drawn inside its GPU instance. */
export interface IComputeSlot {
  mig: IMigDevice;
  /** e.g. `1c` for `1c.3g.71gb`; the whole profile's compute part else. */
  label: string;
  /** Compute slices, for its share of the block's width. */
  size: number;
}

/** A GPU instance: one block of the diagram. */
export interface IInstanceBlock {
  gi: number | null;
  /** The GPU instance's profile, e.g. `3g.40gb`; null when unknown. */
  profile: string | null;
  profileInferred: boolean;
  /** First memory slice and how many it spans. */
  start: number;
  size: number;
  /** Whether the driver reported the placement (else drawn in order). */
  placed: boolean;
  /** Whether this server holds (one of) its devices. */
  visible: boolean;
  used: number | null;
  total: number | null;
  /** Its compute instances; more than one when they share the instance. */
  computes: IComputeSlot[];
}

export interface IMigLayout {
  /** Memory slices drawn (columns). */
  slots: number;
  blocks: IInstanceBlock[];
  /** Slices no listed instance covers: free, or not visible from here. */
  empty: number[];
  /** Whether any block's position was not reported but drawn in order. */
  ordered: boolean;
}

/** Memory slices of a GPU model. */
export function memorySlices(gpu: IGpuDevice): number {
  return /\bA30\b/i.test(gpu.name) ? 4 : 8;
}

const SLICES_BY_COMPUTE: Record<number, number> = { 1: 1, 2: 2, 3: 4, 4: 4 };

function sizeOf(first: IMigDevice, gpu: IGpuDevice, slots: number): number {
  if (first.placement_size) {
    return first.placement_size;
  }
  const total = first.memory_total_bytes;
  if (total && gpu.memory_total_bytes) {
    return Math.max(1, Math.round((total / gpu.memory_total_bytes) * slots));
  }
  const gi = parseProfile(first.profile)?.gi;
  return gi ? (SLICES_BY_COMPUTE[gi] ?? slots) : 1;
}

/** The devices of each GPU instance, in device order. */
function groupByInstance(devices: IMigDevice[]): IMigDevice[][] {
  const groups = new Map<string, IMigDevice[]>();
  devices.forEach((mig, i) => {
    const key =
      mig.gpu_instance_id === null ? `#${i}` : `${mig.gpu_instance_id}`;
    const group = groups.get(key);
    if (group) {
      group.push(mig);
    } else {
      groups.set(key, [mig]);
    }
  });
  return [...groups.values()];
}

function computeSlot(mig: IMigDevice): IComputeSlot {
  const parts = parseProfile(mig.profile);
  const size = parts?.ci ?? parts?.gi ?? 1;
  const label = parts ? (parts.ci ? `${parts.ci}c` : `${parts.gi}g`) : '?';
  return { mig, label, size };
}

/** First free run of `size` slices, aligned to `size` when one is free. */
function firstFit(taken: boolean[], size: number): number {
  const fits = (start: number): boolean =>
    taken.slice(start, start + size).every(t => !t) &&
    start + size <= taken.length;
  for (let start = 0; start + size <= taken.length; start += size) {
    if (fits(start)) {
      return start;
    }
  }
  for (let start = 0; start + size <= taken.length; start++) {
    if (fits(start)) {
      return start;
    }
  }
  return taken.length;
}

/** The diagram of a MIG-enabled GPU. */
export function migLayout(gpu: IGpuDevice): IMigLayout {
  let slots = memorySlices(gpu);
  const groups = groupByInstance(gpu.mig_devices);
  const blocks: IInstanceBlock[] = groups.map(group => {
    const first = group[0];
    return {
      gi: first.gpu_instance_id,
      profile: instanceProfile(first.profile),
      profileInferred: group.some(m => m.profile_inferred === true),
      start: first.placement_start ?? -1,
      size: sizeOf(first, gpu, slots),
      placed: first.placement_start !== null && !!first.placement_size,
      visible: group.some(m => m.visible),
      used: first.memory_used_bytes,
      total: first.memory_total_bytes,
      computes: group.map(computeSlot)
    };
  });
  const taken: boolean[] = new Array(slots).fill(false);
  const mark = (block: IInstanceBlock): void => {
    while (taken.length < block.start + block.size) {
      taken.push(false);
    }
    taken.fill(true, block.start, block.start + block.size);
  };
  blocks.filter(b => b.placed).forEach(mark);
  for (const block of blocks.filter(b => !b.placed)) {
    block.start = firstFit(taken, block.size);
    mark(block);
  }
  slots = taken.length;
  const empty = taken.flatMap((t, i) => (t ? [] : [i]));
  blocks.sort((a, b) => a.start - b.start);
  return { slots, blocks, empty, ordered: blocks.some(b => !b.placed) };
}
