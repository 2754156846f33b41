/**
 * Types mirroring the server's pydantic models (jupyter_gpu_env/models/).
 *
 * Field names are the JSON names the server sends; keep them in step with
 * the OpenAPI document in docs/openapi.json.
 */

import type { IIdleState, IKernelUsage } from './gpu/types';

/** Where host numbers come from: cgroup v2, cgroup v1 or the whole machine. */
export type MemorySource = 'cgroup2' | 'cgroup1' | 'host';

/** Why GPUs are (or are not) visible to the server. */
export type GpuReason =
  'ok' | 'no_driver' | 'no_nvml' | 'no_device' | 'recorded';

export interface IMemoryUsage {
  /** Memory charged to this container (cgroup) or used on the machine. */
  used_bytes: number;
  /** The container's memory limit; the machine's total memory when unlimited. */
  limit_bytes: number;
  /** True when `limit_bytes` is a real cgroup limit, not the machine total. */
  limited: boolean;
}

export interface ICpuUsage {
  /** CPU quota in cores (cgroup), else the machine's CPU count. */
  limit_cores: number;
  /** True when `limit_cores` comes from a cgroup quota or cpuset. */
  limited: boolean;
  /** Average cores busy over the last interval; null on the first sample. */
  usage_cores: number | null;
}

export interface IHostResources {
  source: MemorySource;
  memory: IMemoryUsage;
  cpu: ICpuUsage;
}

export interface IGpuProcess {
  pid: number;
  used_memory_bytes: number | null;
  name: string | null;
  gpu_instance_id: number | null;
  compute_instance_id: number | null;
  /** This server's kernel that owns the process, when known. */
  kernel_id: string | null;
  notebook_path: string | null;
}

export interface IMigDevice {
  /** MIG device index on its GPU (`Device N` in `nvidia-smi -L`). */
  index?: number | null;
  uuid: string | null;
  /** e.g. `1g.10gb`, or `1c.3g.71gb` for a shared GPU instance. */
  profile: string | null;
  /** True when derived from SM count and memory, not printed by a tool. */
  profile_inferred?: boolean;
  gpu_instance_id: number | null;
  compute_instance_id: number | null;
  memory_used_bytes: number | null;
  memory_total_bytes: number | null;
  sm_count: number | null;
  placement_start: number | null;
  placement_size: number | null;
  visible: boolean;
  processes: IGpuProcess[];
}

export interface IGpuDevice {
  index: number;
  name: string;
  uuid: string | null;
  memory_used_bytes: number | null;
  memory_total_bytes: number | null;
  utilization_percent: number | null;
  mig_enabled: boolean;
  mig_devices: IMigDevice[];
  visible: boolean;
  processes: IGpuProcess[];
}

export interface IGpuStatus {
  available: boolean;
  reason: GpuReason;
  /** A sentence saying what the user sees and why. */
  message: string;
}

/** The answer of `GET gpu-env/api/gpu`. */
export interface IGpuSnapshot {
  /** Unix time (seconds) of the sample. */
  sampled_at: number;
  /** How often the server samples, in seconds. */
  interval_seconds: number;
  host: IHostResources;
  gpus: IGpuDevice[];
  gpu_status: IGpuStatus;
  /** This server's kernels, largest host memory first (absent from older servers). */
  kernels?: IKernelUsage[];
  /** Whether held GPU memory sits unused. */
  idle?: IIdleState | null;
}

/** The body of every error response. */
export interface IApiErrorBody {
  message: string;
  reason: string;
  details?: Record<string, unknown>[] | null;
}

// -- environments, kernels, images and tasks (models/envs.py, images.py, tasks.py)

/** `managed`: provided by the platform, read-only; `own`: the user's. */
export type EnvKind = 'managed' | 'own';

/** One conda environment, as listed by `GET environments`. */
export interface IEnvironment {
  /** Unique name in the API (the folder name, `name@parent` for clashes). */
  name: string;
  prefix: string;
  kind: EnvKind;
  python_version: string | null;
  package_count: number;
  /** Disk space of all its files (hard-linked files counted once). */
  size_bytes: number;
  /** Part of `size_bytes` hard-linked from elsewhere (the package cache). */
  shared_bytes: number;
  has_ipykernel: boolean;
  /** The kernelspec this extension registered for it, if any. */
  kernel_name: string | null;
  /** For a clone: the prefix it was cloned from. */
  source: string | null;
  /** For a clone: the source's name at the time. */
  source_name: string | null;
  /** When this extension created it (Unix seconds). */
  created_at: number | null;
}

export interface IPackage {
  name: string;
  version: string;
  build: string;
  channel: string | null;
  /** `conda`: a conda record; `pypi`: installed with pip only. */
  kind: 'conda' | 'pypi';
}

/** `GET environments/{name}`. */
export interface IEnvironmentDetail extends IEnvironment {
  packages: IPackage[];
}

export interface IEnvironmentList {
  environments: IEnvironment[];
}

/** `POST environments/{name}/kernel` (201). */
export interface IKernelInfo {
  kernel_name: string;
  display_name: string;
  resource_dir: string;
  prefix: string;
  env_name: string;
  env: Record<string, string>;
}

/** `DELETE environments/{name}`. */
export interface IDeletedEnvironment {
  name: string;
  kernel_removed: string | null;
}

export type ExportFormat = 'yaml' | 'explicit';

/** `GET environments/{name}/export`. */
export interface IExportResult {
  format: ExportFormat;
  filename: string;
  content: string;
}

/** What a package change did (the result of an `install` task). */
export interface IPackagesResult {
  environment: IEnvironment;
  report: { installed: string[]; removed: string[]; seconds: number };
}

export type ImageFormat = 'squashfs' | 'sif';
export type Compression = 'zstd' | 'xz' | 'none';

/** `POST environments/{name}/image`. */
export interface IImageRequest {
  format: ImageFormat;
  compression?: Compression;
}

/** Exact command lines to use an image. */
export interface IImageUsage {
  mount_path: string;
  apptainer: string;
  squashfuse: string;
  unsquashfs: string;
}

/** A packed image (`GET images`). */
export interface IImage {
  id: string;
  environment: string;
  source_prefix: string;
  content_hash: string;
  format: ImageFormat;
  compression: Compression;
  path: string;
  size_bytes: number;
  /** Files in the environment, all now in this one file. */
  file_count: number;
  env_size_bytes: number;
  /** Unix seconds. */
  created_at: number;
  pack_seconds: number;
  tools: Record<string, string>;
  usage: IImageUsage;
}

export interface IImageList {
  images: IImage[];
}

export type TaskState =
  'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** A long operation (clone, install, pack): `GET tasks/{id}`. */
export interface ITask {
  id: string;
  /** `clone`, `install`, `pack`. */
  kind: string;
  /** A sentence for the user, e.g. "Clone 'base' as 'mine'". */
  title: string;
  state: TaskState;
  /** Fraction done, 0..1. */
  progress: number;
  message: string;
  reason: string | null;
  log_tail: string[];
  /** What the task produced, when it succeeded (shape depends on `kind`). */
  result: unknown;
  /** The API path the task works on, e.g. `environments/mine`. */
  target: string | null;
  created_at: number;
  finished_at: number | null;
}

export interface ITaskList {
  tasks: ITask[];
}
