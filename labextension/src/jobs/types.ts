/**
 * Types of the batch-job API, mirroring jupyter_gpu_env/models/jobs.py.
 *
 * Field names are the JSON names the server sends; keep them in step with
 * docs/openapi.json.
 */
import { JSONValue } from '@lumino/coreutils';

export type JobState =
  'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** The states of a job that has not ended. */
export const ACTIVE_STATES: readonly JobState[] = ['queued', 'running'];

/** Whether a job is still queued or running. */
export function isActive(job: { state: JobState }): boolean {
  return ACTIVE_STATES.includes(job.state);
}

/** Resources as a submission asks for them, in the forms people write. */
export interface IResourceRequest {
  /** CPU cores, 1..1024. */
  cpus?: number;
  /** Bytes, or a string with a binary unit: `512M`, `4G`. */
  memory?: string;
  /** Whole GPUs; not with `mig_profile`. */
  gpus?: number;
  /** A MIG slice such as `1g.10gb`. */
  mig_profile?: string;
  /** Minutes, or SLURM's `HH:MM:SS` / `D-HH:MM:SS`. */
  time_limit?: string;
}

/** `POST jobs`. At most one of kernel, environment and image. */
export interface IJobRequest {
  notebook_path: string;
  backend: string;
  kernel?: string;
  environment?: string;
  image?: string;
  /** Values for names the notebook's `parameters` cell declares. */
  parameters: Record<string, JSONValue>;
  resources: IResourceRequest;
  queue?: string;
  name?: string;
}

/** A job's resources, normalized by the server (bytes and seconds). */
export interface IJobResources {
  cpus: number | null;
  memory_bytes: number | null;
  gpus: number | null;
  mig_profile: string | null;
  time_limit_seconds: number | null;
}

export interface IJobProgress {
  /** Code cells executed so far. */
  cells_done: number;
  /** Code cells in the notebook, parameters included. */
  cells_total: number;
}

/** A batch job: one run of a notebook snapshot. */
export interface IJob {
  id: string;
  name: string;
  backend: string;
  state: JobState;
  /** Machine-readable why, e.g. `cell_error`. */
  reason: string | null;
  /** Why the job is in its state, in words. */
  message: string;
  notebook_path: string;
  /** Relative to the server's root when inside it, else absolute. */
  job_dir: string;
  input_path: string;
  /** The executed notebook, written cell by cell. */
  output_path: string;
  log_path: string;
  parameters: Record<string, JSONValue>;
  resources: IJobResources;
  kernel: string | null;
  environment: string | null;
  image: string | null;
  queue: string | null;
  /** Unix seconds. */
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  progress: IJobProgress;
  backend_job_id: string | null;
  /** Why a queued job is not running yet. */
  pending_reason: string | null;
  exit_code: number | null;
}

/** `GET jobs`. */
export interface IJobList {
  items: IJob[];
  /** Jobs matching the filter, over all pages. */
  total: number;
  offset: number;
  limit: number;
  next_offset: number | null;
}

/** `GET jobs/{id}/log?offset=`. */
export interface ILogChunk {
  offset: number;
  next_offset: number;
  text: string;
  /** True once the job has ended and the whole log has been read. */
  eof: boolean;
}

export interface IResourceLimits {
  max_cpus: number | null;
  max_memory_bytes: number | null;
  max_gpus: number | null;
  max_time_limit_seconds: number | null;
}

/** What a backend offers (`GET backends`). */
export interface IBackendInfo {
  name: string;
  /** `local`, `slurm` or `kubernetes`. */
  kind: string;
  queues: string[];
  default_queue: string | null;
  limits: IResourceLimits;
  mig_profiles: string[];
  supports_images: boolean;
  supports_gpus: boolean;
  /** Resources this backend enforces; the others are only recorded. */
  enforced: string[];
  /** Sentences for the user about this backend. */
  notes: string[];
}

export interface IBackendList {
  backends: IBackendInfo[];
}

export interface IBackendUsage {
  gpu_hours: number;
  cpu_hours: number;
  /** Jobs created in the period, by state. */
  jobs: Partial<Record<JobState, number>>;
}

/** `GET jobs/usage`: by default the last 7 days. */
export interface IUsageReport {
  period_start: number;
  period_end: number;
  backends: Record<string, IBackendUsage>;
  total: IBackendUsage;
}
