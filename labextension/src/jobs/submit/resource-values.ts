/**
 * The pure rules of the submit dialog's resource fields: what is sent from
 * what was typed, and how a backend's free capacity reads.
 */
import type { ICapacityRow, IResourceRequest } from '../../api/types';

// The forms the server reads (models/resources.py), checked here as typed so
// that a field says what is wrong before Submit, in the server's own words.
// test/jobs/resource-values.spec.ts holds them to docs/openapi.json.
export const MEMORY_PATTERN =
  /^ *(?![0.]*[ KkMmGgTt])([0-9]{1,6}(\.[0-9]{1,3})?) *([KkMmGgTt])([Ii]?[Bb])? *$/;
export const TIME_LIMIT_PATTERN =
  /^ *(?![-0:]* *$)(([0-9]{1,6})|([0-9]{1,6}):([0-5]?[0-9])|([0-9]{1,5}):([0-5]?[0-9]):([0-5]?[0-9])|([0-9]{1,3})-([01]?[0-9]|2[0-3])(:([0-5]?[0-9])(:([0-5]?[0-9]))?)?) *$/;
export const MEMORY_HINT =
  "write it like '512M', '4G' or '1.5T' (binary units)";
export const TIME_LIMIT_HINT =
  "write minutes ('90'), 'HH:MM:SS' ('1:30:00') or 'D-HH:MM:SS' ('2-00:00:00')";
/** The longest memory or time limit text the server reads. */
export const MAX_TEXT = 40;
/** Whole-number fields: the words the server names them by, and its range. */
export const WHOLE_NUMBERS = {
  cpus: { what: 'CPUs', low: 1, high: 1024 },
  gpus: { what: 'GPUs', low: 0, high: 64 },
  max_concurrent: { what: 'runs at once', low: 1, high: 100000 }
} as const;

/** A value as Python's repr shows a string (how the server quotes it). */
function quoted(text: string): string {
  const shown = text.length <= 60 ? text : `${text.slice(0, 57)}...`;
  return shown.includes("'") && !shown.includes('"')
    ? `"${shown}"`
    : `'${shown}'`;
}

/**
 * What is wrong with a typed resource, in the words the server would use,
 * or null (an empty field is left to the backend).
 */
export function resourceProblem(
  key: keyof typeof WHOLE_NUMBERS | 'memory' | 'time_limit',
  typed: string
): string | null {
  const text = typed.trim();
  if (!text) {
    return null;
  }
  if (key === 'memory' || key === 'time_limit') {
    const what = key === 'memory' ? 'memory' : 'time limit';
    if (text.length > MAX_TEXT) {
      return `${what} is longer than ${MAX_TEXT} characters`;
    }
    const [pattern, hint] =
      key === 'memory'
        ? [MEMORY_PATTERN, MEMORY_HINT]
        : [TIME_LIMIT_PATTERN, TIME_LIMIT_HINT];
    return pattern.test(text)
      ? null
      : `${what} ${quoted(text)} is not valid; ${hint}`;
  }
  const { what, low, high } = WHOLE_NUMBERS[key];
  const n = Number(text);
  return /^[0-9]+$/.test(text) && n >= low && n <= high
    ? null
    : `${what} must be a whole number from ${low} to ${high}`;
}

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
