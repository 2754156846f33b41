/**
 * Pure formatting of jobs: elapsed times, progress, usage, resources.
 */
import type {
  IBackendUsage,
  IJob,
  IJobGpuUsage,
  IJobResources,
  IUsageReport,
  JobState
} from '../api/types';
import { formatDuration, formatHours } from '../components/format';

// A job's durations and hours are the shared ones (the GPU and Dask sections
// and the energy words use them too).
export { formatDuration, formatHours };

/** Whether a job in this state has not ended (queued or running). */
export function isActiveState(state: JobState): boolean {
  return state === 'queued' || state === 'running';
}

/** Whether a job is still queued or running. */
export function isActive(job: { state: JobState }): boolean {
  return isActiveState(job.state);
}

/**
 * Whether the job is an interactive kernel's session (a batch kernel's):
 * it writes no output notebook and is not run again.
 */
export function isInteractive(job: Pick<IJob, 'kind'>): boolean {
  return job.kind === 'kernel';
}

/** What a job's kind is called in its row. */
export const INTERACTIVE_LABEL = 'Interactive session';

/** How an ended job is named: "Job 'train'", "Interactive session 'kernel: fit'". */
export function endedName(job: IJob): string {
  return `${job.kind === 'kernel' ? INTERACTIVE_LABEL : 'Job'} '${job.name}'`;
}

/** How it ended, in a word: a batch kernel shut down has "ended", not "succeeded". */
export function endedWord(job: IJob): string {
  return job.kind === 'kernel' && job.state === 'succeeded'
    ? 'ended'
    : job.state;
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

export function jobCount(usage: IBackendUsage): number {
  return Object.values(usage.jobs).reduce((a, b) => a + (b ?? 0), 0);
}

/**
 * Why the weeks' GPU-hours chart has no bar: no job of the last `weeks`
 * weeks asked for a GPU.
 */
export function describeNoGpuHours(weeks: number): string {
  return (
    `No GPU-hours in the last ${weeks} weeks: no job that ended in them ` +
    'asked for a GPU. Jobs sent with one or more GPUs fill this chart as ' +
    'they finish.'
  );
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

/** `1st`, `2nd`, `3rd`, `4th`, `11th`, `12th`, `13th`, `21st`, `112th`. */
export function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) {
    return `${n}th`;
  }
  const suffix = ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th';
  return `${n}${suffix}`;
}

/**
 * A time to come, short: `14:20` today, else `3 Jun 14:20` (`now` in Unix
 * seconds).
 */
export function formatStart(unixSeconds: number, now: number): string {
  const when = new Date(unixSeconds * 1000);
  const today = new Date(now * 1000);
  const clock = `${pad(when.getHours())}:${pad(when.getMinutes())}`;
  if (when.toDateString() === today.toDateString()) {
    return clock;
  }
  const date = when.toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'short'
  });
  return `${date} ${clock}`;
}

/**
 * Where a queued job stands: `3rd in queue 'gpu', estimated start 14:20`,
 * `next in queue 'gpu'`; null when the backend says nothing.
 */
export function describeQueue(job: IJob, now: number): string | null {
  const parts: string[] = [];
  const queue = job.queue_name ? ` in queue '${job.queue_name}'` : ' in queue';
  if (job.queue_position !== null && job.queue_position > 0) {
    parts.push(
      job.queue_position === 1
        ? `next${queue}`
        : `${ordinal(job.queue_position)}${queue}`
    );
  }
  if (job.estimated_start !== null) {
    parts.push(`estimated start ${formatStart(job.estimated_start, now)}`);
  }
  if (parts.length === 0) {
    return null;
  }
  return parts.join(', ');
}

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

/** A byte count in `unit` (GiB or MiB): one decimal under 10, else none. */
function inUnit(bytes: number, unit: number): string {
  const value = bytes / unit;
  return value < 10 ? String(Number(value.toFixed(1))) : value.toFixed(0);
}

/** `3.1 of 10 GiB`: both in the unit of the total. */
export function formatBytesOf(used: number, total: number): string {
  const unit = total >= GIB ? GIB : MIB;
  return `${inUnit(used, unit)} of ${inUnit(total, unit)} ${unit === GIB ? 'GiB' : 'MiB'}`;
}

/** The MIG profile of the job's devices, if it ran on slices. */
export function migProfileOf(gpu: IJobGpuUsage): string | null {
  return gpu.devices.find(device => device.mig_profile)?.mig_profile ?? null;
}

/**
 * The job's GPU use on one line: `GPU 23% avg · 3.1 of 80 GiB peak`, `MIG
 * 1g.10gb · 3.1 of 10 GiB peak`; null when there are no numbers.
 */
export function describeGpuUse(gpu: IJobGpuUsage | null): string | null {
  if (!gpu || !gpu.available || gpu.samples <= 0) {
    return null;
  }
  const parts: string[] = [];
  const mig = migProfileOf(gpu);
  const count = gpu.devices.length;
  const what = mig ? `MIG ${mig}` : count > 1 ? `${count} GPUs` : 'GPU';
  if (!mig && gpu.mean_utilization_percent !== null) {
    parts.push(`${what} ${Math.round(gpu.mean_utilization_percent)}% avg`);
  } else {
    parts.push(what);
  }
  if (gpu.peak_memory_bytes !== null && gpu.memory_total_bytes) {
    parts.push(
      `${formatBytesOf(gpu.peak_memory_bytes, gpu.memory_total_bytes)} peak`
    );
  } else if (gpu.peak_memory_bytes !== null) {
    parts.push(`${formatGiB(gpu.peak_memory_bytes)} peak`);
  }
  return parts.join(' · ');
}

/** The details of a job's GPU use, one fact a line (for tooltips). */
export function describeGpuDetail(gpu: IJobGpuUsage | null): string {
  if (!gpu) {
    return 'No GPU samples yet.';
  }
  if (!gpu.available) {
    return `No GPU numbers: ${gpu.reason || 'the job saw no GPU'}.`;
  }
  const lines = gpu.devices.map(
    device =>
      device.name +
      (device.mig_profile ? ` (MIG ${device.mig_profile})` : '') +
      (device.memory_total_bytes
        ? `, ${formatGiB(device.memory_total_bytes)}`
        : '')
  );
  if (gpu.peak_utilization_percent !== null) {
    lines.push(`Peak utilization ${Math.round(gpu.peak_utilization_percent)}%`);
  }
  if (gpu.idle_fraction !== null) {
    lines.push(`Idle ${Math.round(gpu.idle_fraction * 100)}% of the time`);
  }
  if (gpu.gpu_hours_allocated !== null) {
    lines.push(
      `${formatHours(gpu.gpu_hours_allocated)} GPU-hours allocated` +
        (gpu.gpu_hours_used !== null
          ? `, ${formatHours(gpu.gpu_hours_used)} used`
          : '')
    );
  }
  lines.push(
    `${gpu.samples} samples` +
      (gpu.interval_seconds ? ` every ${gpu.interval_seconds} s` : '')
  );
  return [...lines, ...gpu.notes].join('\n');
}

/** Whether a running job's GPU has idled at least `threshold` seconds. */
export function isGpuIdle(job: IJob, threshold: number): boolean {
  const gpu = job.gpu;
  return (
    job.state === 'running' &&
    threshold > 0 &&
    !!gpu?.available &&
    gpu.idle_seconds >= threshold
  );
}

/**
 * What to tell of a running job whose GPU idles: the server's own warning
 * where the site cancels such jobs (its message says when), else a nudge.
 */
export function describeGpuIdle(
  job: Pick<IJob, 'name' | 'message' | 'gpu'>
): string {
  if (job.message.startsWith('Its GPU has been idle for ')) {
    return `Job '${job.name}': ${job.message}`;
  }
  const idle = formatDuration(job.gpu?.idle_seconds ?? 0);
  return (
    `Job '${job.name}' has left its GPU idle for ${idle}. ` +
    'Cancel it if it no longer needs the GPU.'
  );
}

/** Used GPU-hours as a share of the measured ones: `42%`, or `n/a`. */
export function describeEfficiency(usage: IBackendUsage): string {
  if (!(usage.gpu_hours_measured > 0)) {
    return 'n/a';
  }
  return `${Math.round((usage.gpu_hours_used / usage.gpu_hours_measured) * 100)}%`;
}

/** `local: 1.2 GPU-h allocated, 0.5 used (42% efficient)`. */
export function describeBackendGpuHours(
  name: string,
  usage: IBackendUsage
): string {
  return (
    `${name}: ${formatHours(usage.gpu_hours)} GPU-h allocated, ` +
    `${formatHours(usage.gpu_hours_used)} used ` +
    `(efficiency ${describeEfficiency(usage)})`
  );
}
