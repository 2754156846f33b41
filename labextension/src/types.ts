/**
 * Types mirroring the server's pydantic models (jupyter_gpu_env/models/).
 *
 * Field names are the JSON names the server sends; keep them in step with
 * the OpenAPI document in docs/openapi.json.
 */

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
  uuid: string | null;
  /** e.g. `1g.10gb`, or `1c.3g.71gb` for a shared GPU instance. */
  profile: string | null;
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
}

/** The body of every error response. */
export interface IApiErrorBody {
  message: string;
  reason: string;
  details?: Record<string, unknown>[] | null;
}
