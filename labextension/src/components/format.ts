/**
 * Pure formatting helpers (no DOM, no JupyterLab), easy to test on their own:
 * bytes, percents, cores, durations, hours.
 */
import { MemorySource } from '../api/types';

const BINARY_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/**
 * Format a byte count with binary units: `formatBytes(1288490188)` is `"1.2 GiB"`.
 *
 * Values under 10 of a unit keep one decimal, larger ones none.
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) {
    return '—';
  }
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BINARY_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) {
    return `${Math.round(value)} B`;
  }
  const digits = value < 10 ? 1 : 0;
  // 1023.96 MiB would print as "1024 MiB": show it as "1.0 GiB" instead.
  if (value.toFixed(digits) === '1024' && unit < BINARY_UNITS.length - 1) {
    return `1.0 ${BINARY_UNITS[unit + 1]}`;
  }
  return `${value.toFixed(digits)} ${BINARY_UNITS[unit]}`;
}

/** `used` as a percentage of `total`, clamped to 0..100; 0 when total is 0. */
export function percentOf(used: number, total: number): number {
  if (!(total > 0) || !(used > 0)) {
    return 0;
  }
  return Math.min(100, (used / total) * 100);
}

/** How full a bar is, for its colour. */
export type UsageLevel = 'ok' | 'warn' | 'critical';

/** Above 80 % is `warn`, above 95 % is `critical`. */
export function usageLevel(percent: number): UsageLevel {
  if (percent >= 95) {
    return 'critical';
  }
  if (percent >= 80) {
    return 'warn';
  }
  return 'ok';
}

/** Where the memory limit comes from, in a few words. */
export function describeSource(source: MemorySource, limited: boolean): string {
  if (!limited || source === 'host') {
    return 'no container limit — machine total';
  }
  return source === 'cgroup2' ? 'cgroup v2 limit' : 'cgroup v1 limit';
}

/** Cores with at most two decimals and no trailing zeros: 2, 0.5, 0.31. */
export function formatCores(cores: number): string {
  if (!Number.isFinite(cores)) {
    return '—';
  }
  return String(Math.round(cores * 100) / 100);
}

/** `"1.2 GiB of 4.0 GiB"`. */
export function formatUsage(used: number, total: number): string {
  return `${formatBytes(used)} of ${formatBytes(total)}`;
}

/** `12 min`, `1 h 5 min`, `40 s`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) {
    return `${s} s`;
  }
  const minutes = Math.floor(s / 60);
  if (minutes < 60) {
    return `${minutes} min`;
  }
  const rest = minutes % 60;
  return `${Math.floor(minutes / 60)} h${rest ? ` ${rest} min` : ''}`;
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

/**
 * An image id where the environment is named beside it: its content hash
 * and kind (`3f2a9c1b0d4e-zstd`), without the environment's name in front
 * (ids are `<environment>-<hash>-<kind>`; a cut at a fixed length showed
 * only the name, `demo-python-`).
 */
export function imageIdBeside(id: string, environment: string): string {
  return environment && id.startsWith(`${environment}-`)
    ? id.slice(environment.length + 1)
    : id;
}
