/**
 * Types of the GPU panel's extra answers (models/gpu.py): per-kernel usage,
 * the idle state, the history and the release result.
 *
 * Field names are the JSON names the server sends; keep them in step with
 * docs/openapi.json.
 */

/** One of this server's kernels and the memory its process tree holds. */
export interface IKernelUsage {
  kernel_id: string;
  /** The kernelspec name, e.g. `python3`. */
  kernel_name: string;
  /** The notebook of the kernel's session, if any. */
  notebook_path?: string | null;
  pid: number;
  /** Processes in the kernel's tree (the kernel and its children). */
  processes: number;
  /** Resident memory of the tree, summed. */
  host_memory_bytes: number;
  /** GPU memory held by the tree's processes, when GPUs are visible. */
  gpu_memory_bytes?: number | null;
}

/** Whether this server holds GPU memory without using the GPU. */
export interface IIdleState {
  /** True once the held GPU has shown no utilization for `threshold_seconds`. */
  idle: boolean;
  idle_seconds: number;
  threshold_seconds: number;
  /** Ids of this server's kernels holding GPU memory. */
  kernels?: string[];
  message?: string;
}

/** GPU memory and utilization of one device at one sample. */
export interface IDeviceMemoryPoint {
  memory_used_bytes?: number | null;
  utilization_percent?: number | null;
}

/** One past sample, in the compact form sparklines need. */
export interface IHistoryPoint {
  /** Unix time (seconds). */
  t: number;
  host_memory_used_bytes: number;
  host_memory_limit_bytes: number;
  cpu_usage_cores?: number | null;
  /** Per GPU or MIG device, keyed by UUID (or `gpu<index>` without one). */
  devices?: Record<string, IDeviceMemoryPoint>;
}

/** `GET gpu/history`: past samples, oldest first. */
export interface IGpuHistory {
  interval_seconds: number;
  points: IHistoryPoint[];
}

/** `POST gpu/release`. */
export interface IReleaseResult {
  /** Kernel ids shut down to release GPU memory. */
  shut_down: string[];
}
