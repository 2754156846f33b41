/**
 * Pure formatting of jobs: elapsed times, progress, usage, resources.
 */
import type {
  IBackendUsage,
  IJob,
  IJobResources,
  IUsageReport,
  JobState
} from '../api/types';

/** Whether a job in this state has not ended (queued or running). */
export function isActiveState(state: JobState): boolean {
  return state === 'queued' || state === 'running';
}

/** Whether a job is still queued or running. */
export function isActive(job: { state: JobState }): boolean {
  return isActiveState(job.state);
}

/** Seconds as a clock: `0:07`, `12:05`, `1:02:03`, `2 d 3:04:05`. */
export function formatClock(seconds: number): string {
  const total = Math.max(0, Math.floor(seconds));
  const days = Math.floor(total / 86400);
  const h = Math.floor((total % 86400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const mmss = `${pad(m)}:${pad(s)}`;
  const clock = h || days ? `${h}:${mmss}` : `${m}:${pad(s)}`;
  return days ? `${days} d ${clock}` : clock;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/**
 * How long a job has run (or ran), in seconds; for a queued job, how long it
 * has waited. `now` is in Unix seconds.
 */
export function elapsedSeconds(job: IJob, now: number): number {
  if (job.started_at === null) {
    return (job.finished_at ?? now) - job.created_at;
  }
  return (job.finished_at ?? now) - job.started_at;
}

/** `"3 of 8 cells"`, or null when the runner has not counted them yet. */
export function describeProgress(job: IJob): string | null {
  const { cells_done, cells_total } = job.progress;
  if (cells_total <= 0) {
    return null;
  }
  return `${Math.min(cells_done, cells_total)} of ${cells_total} cells`;
}

/** Progress as a fraction 0..1 (1 for a job that succeeded). */
export function progressFraction(job: IJob): number {
  if (job.state === 'succeeded') {
    return 1;
  }
  const { cells_done, cells_total } = job.progress;
  return cells_total > 0 ? Math.min(1, cells_done / cells_total) : 0;
}

/** Hours with one decimal, two under a tenth: `3.2`, `0.05`, `<0.01`, `0`. */
export function formatHours(hours: number): string {
  if (!(hours > 0)) {
    return '0';
  }
  if (hours < 0.01) {
    return '<0.01';
  }
  return hours < 0.1 ? hours.toFixed(2) : hours.toFixed(1);
}

export function jobCount(usage: IBackendUsage): number {
  return Object.values(usage.jobs).reduce((a, b) => a + (b ?? 0), 0);
}

/** `"This week: 3.2 GPU-hours, 0.5 CPU-hours, 4 jobs"`. */
export function describeUsage(report: IUsageReport): string {
  const { total } = report;
  const jobs = jobCount(total);
  return (
    `This week: ${formatHours(total.gpu_hours)} GPU-hours, ` +
    `${formatHours(total.cpu_hours)} CPU-hours, ` +
    `${jobs} ${jobs === 1 ? 'job' : 'jobs'}`
  );
}

/** The usage per backend and state, for the usage line's tooltip. */
export function describeUsageDetail(report: IUsageReport): string {
  const lines = Object.entries(report.backends).map(([name, usage]) => {
    const states = Object.entries(usage.jobs)
      .map(([state, n]) => `${n} ${state}`)
      .join(', ');
    return (
      `${name}: ${formatHours(usage.gpu_hours)} GPU-h, ` +
      `${formatHours(usage.cpu_hours)} CPU-h` +
      (states ? ` (${states})` : '')
    );
  });
  const since = new Date(report.period_start * 1000).toLocaleString();
  return [`Since ${since}`, ...lines].join('\n');
}

/** `"4 CPUs · 8.0 GiB · 1 GPU · 1:00:00"`: what a job asked for. */
export function describeResources(res: IJobResources): string {
  const parts: string[] = [];
  if (res.cpus !== null) {
    parts.push(`${res.cpus} CPU${res.cpus === 1 ? '' : 's'}`);
  }
  if (res.memory_bytes !== null) {
    parts.push(`${formatGiB(res.memory_bytes)} memory`);
  }
  if (res.mig_profile) {
    parts.push(`MIG ${res.mig_profile}`);
  } else if (res.gpus) {
    parts.push(`${res.gpus} GPU${res.gpus === 1 ? '' : 's'}`);
  }
  if (res.time_limit_seconds !== null) {
    parts.push(`limit ${formatClock(res.time_limit_seconds)}`);
  }
  return parts.join(' · ');
}

function formatGiB(bytes: number): string {
  const gib = bytes / (1 << 30);
  if (gib >= 1) {
    return `${Number(gib.toFixed(1))} GiB`;
  }
  return `${Math.round(bytes / (1 << 20))} MiB`;
}

/** Where the job runs: its kernel, environment or image. */
export function describeRuntime(job: IJob): string {
  if (job.image) {
    return `image ${job.image}`;
  }
  if (job.environment) {
    return `environment ${job.environment}`;
  }
  return job.kernel ? `kernel ${job.kernel}` : '';
}

/** A Unix time as the browser's local date and time. */
export function formatTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toLocaleString();
}
