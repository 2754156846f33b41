/**
 * Records as the server sends them, for the component tests (`*.spec.tsx`)
 * and the formatting tests: plain data, so the tests in node (no DOM) can
 * import them too.
 */
import type {
  IJob,
  IJobGpuUsage,
  IPipeline,
  ISchedule,
  ISweep
} from '../src/api/types';

/** Noon, 1 December 2026 (UTC), in Unix seconds. */
export const NOW = Date.UTC(2026, 11, 1, 12, 0) / 1000;

export function job(fields: Partial<IJob> = {}): IJob {
  return {
    id: 'j1',
    name: 'train',
    kind: 'notebook',
    state: 'running',
    backend: 'slurm',
    backend_job_id: '4242',
    node: 'gpu07',
    queue: 'gpu',
    queue_name: null,
    queue_position: null,
    estimated_start: null,
    notebook_path: 'work/train.ipynb',
    input_path: 'work/train.ipynb',
    output_path: 'jobs/j1/train.ipynb',
    log_path: 'jobs/j1/log.txt',
    job_dir: 'jobs/j1',
    checkpoint_dir: null,
    kernel: 'python3',
    environment: null,
    image: null,
    parameters: {},
    parameters_omitted: false,
    resources: {
      cpus: 4,
      gpus: 1,
      memory_bytes: null,
      mig_profile: null,
      time_limit_seconds: null
    },
    progress: { cells_done: 2, cells_total: 8 },
    created_at: NOW - 600,
    started_at: NOW - 125,
    finished_at: null,
    exit_code: null,
    message: '',
    reason: null,
    pending_reason: null,
    gpu: null,
    attempts: [],
    priority: 'normal',
    notify: null,
    group_id: null,
    group_index: null,
    pipeline_id: null,
    pipeline_node: null,
    schedule_id: null,
    waiting_for: [],
    ...fields
  } as IJob;
}

/**
 * A job's GPU summary: a whole H100 for two hours, 0.42 kWh by its energy
 * counter, at a site that set no carbon intensity and no prices.
 */
export function gpuUsage(fields: Partial<IJobGpuUsage> = {}): IJobGpuUsage {
  return {
    available: true,
    reason: null,
    devices: [
      {
        name: 'NVIDIA H100 80GB HBM3',
        uuid: 'GPU-1',
        mig_profile: null,
        memory_total_bytes: 80 * 1024 ** 3
      }
    ],
    samples: 1440,
    interval_seconds: 5,
    mean_utilization_percent: 23,
    peak_utilization_percent: 81,
    peak_memory_bytes: 3.1 * 1024 ** 3,
    memory_total_bytes: 80 * 1024 ** 3,
    idle_fraction: 0.4,
    idle_seconds: 0,
    gpu_hours_allocated: 2,
    gpu_hours_used: 0.46,
    energy_joules: 0.42 * 3.6e6,
    energy_source: 'counter',
    energy_note: null,
    co2e_grams: null,
    cost: null,
    notes: [],
    updated_at: NOW,
    ...fields
  };
}

export function sweep(fields: Partial<ISweep> = {}): ISweep {
  return {
    id: 'g1',
    name: 'grid',
    state: 'running',
    backend: 'slurm',
    backend_job_id: null,
    notebook_path: 'work/grid.ipynb',
    size: 4,
    max_concurrent: 2,
    counts: { succeeded: 1, failed: 1, running: 2 },
    parameters: {},
    varied: ['alpha'],
    gpu_idle_runs: [],
    created_at: NOW - 900,
    finished_at: null,
    cancelled_at: null,
    pipeline_id: null,
    pipeline_node: null,
    schedule_id: null,
    ...fields
  } as ISweep;
}

export function schedule(fields: Partial<ISchedule> = {}): ISchedule {
  return {
    id: 's1',
    name: 'nightly',
    backend: 'slurm',
    notebook_path: 'work/report.ipynb',
    pipeline_path: null,
    schedule: '0 6 * * *',
    description: 'every day at 06:00',
    timezone: 'UTC',
    overlap: 'skip',
    active: true,
    kernel: 'python3',
    environment: null,
    image: null,
    queue: null,
    parameters: {},
    resources: {} as ISchedule['resources'],
    sweep_size: null,
    created_at: NOW - 86400,
    updated_at: NOW - 86400,
    snapshot_at: NOW - 86400,
    next_runs: [{ at: NOW + 18 * 3600, utc: '', local: '2 Dec 2026, 06:00' }],
    keeper: { kind: 'backend', handle: '12', present: true, message: '' },
    last_runs: [],
    ...fields
  } as ISchedule;
}

export function pipeline(fields: Partial<IPipeline> = {}): IPipeline {
  return {
    id: 'p1',
    name: 'etl',
    state: 'running',
    counts: { succeeded: 1, running: 1, waiting: 1 },
    nodes: [
      { id: 'a', state: 'succeeded' },
      { id: 'b', state: 'running' },
      { id: 'c', state: 'waiting' }
    ] as IPipeline['nodes'],
    file_path: 'work/etl.pipeline.yaml',
    created_at: NOW - 300,
    finished_at: null,
    cancelled_at: null,
    schedule_id: null,
    ...fields
  } as IPipeline;
}
