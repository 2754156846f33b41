/**
 * Schedules in words (pure): due times in the user's time ("Mon 1 Dec
 * 06:00"), how far off ("in 3 h"), the next run, the last runs as marks
 * with a title each, and how the keeper stands.
 */
import type { ISchedule, IScheduleRun } from '../api/types';

/**
 * A due time (Unix seconds) as `Mon 1 Dec 06:00` in `timeZone` (default:
 * the browser's), with the year when it is not `now`'s.
 */
export function formatDue(at: number, now: number, timeZone?: string): string {
  const options: Intl.DateTimeFormatOptions = {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZone
  };
  const parts = (value: number): Record<string, string> => {
    const found: Record<string, string> = {};
    for (const part of new Intl.DateTimeFormat('en-GB', options).formatToParts(
      new Date(value * 1000)
    )) {
      found[part.type] = part.value;
    }
    return found;
  };
  const p = parts(at);
  const year = p.year !== parts(now).year ? ` ${p.year}` : '';
  return `${p.weekday} ${p.day} ${p.month}${year} ${p.hour}:${p.minute}`;
}

/** How far off a time is: `in 40 s`, `in 12 min`, `in 3 h 5 min`, `in 2 days`. */
export function formatIn(at: number, now: number): string {
  const seconds = Math.round(at - now);
  if (seconds <= 0) {
    return 'due now';
  }
  if (seconds < 60) {
    return `in ${seconds} s`;
  }
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) {
    return `in ${minutes} min`;
  }
  if (minutes < 48 * 60) {
    const h = Math.floor(minutes / 60);
    const m = minutes % 60;
    return m && h < 10 ? `in ${h} h ${m} min` : `in ${h} h`;
  }
  return `in ${Math.round(minutes / 1440)} days`;
}

/** The next run in words: `Mon 1 Dec 06:00 (in 3 h)`, or why there is none. */
export function describeNext(schedule: ISchedule, now: number): string {
  if (!schedule.active) {
    return 'Paused: no run until it is resumed';
  }
  const next = schedule.next_runs[0];
  if (!next) {
    return 'No run left: the schedule has ended';
  }
  return `Next ${formatDue(next.at, now)} (${formatIn(next.at, now)})`;
}

/** A mark's colour, as the job badges' tones. */
export type MarkTone = 'brand' | 'success' | 'error' | 'warn' | 'muted';

const STATE_TONES: Record<string, MarkTone> = {
  queued: 'muted',
  running: 'brand',
  succeeded: 'success',
  failed: 'error',
  cancelled: 'warn'
};

/** A last run as a small mark: its colour and its title. */
export function runMark(
  run: IScheduleRun,
  now: number
): { tone: MarkTone; title: string; label: string } {
  const when = formatDue(run.due_at, now);
  const why = run.message ? `: ${run.message}` : '';
  if (run.outcome === 'skipped') {
    return {
      tone: 'muted',
      label: 'skipped',
      title: `${when}: skipped${why || ', the previous run still ran'}`
    };
  }
  if (run.outcome === 'missed') {
    return {
      tone: 'warn',
      label: 'missed',
      title: `${when}: missed${why || ', nothing could start it then'}`
    };
  }
  const state = run.state ?? 'started';
  return {
    tone: STATE_TONES[state] ?? 'brand',
    label: state,
    title: `${when}: started, ${state}${why}`
  };
}

/** The marks' order: oldest first, so the newest is at the right end. */
export function marksInOrder(runs: IScheduleRun[], most = 10): IScheduleRun[] {
  return [...runs]
    .sort((a, b) => b.due_at - a.due_at)
    .slice(0, most)
    .reverse();
}

/**
 * How the keeper stands, when the user needs to know: the waiting job gone
 * (`lost`, with re-arm offered), this server keeping it (`server`); null
 * when the batch system holds it as it should.
 */
export function keeperNote(
  schedule: ISchedule
): { level: 'lost' | 'server'; text: string } | null {
  const { keeper } = schedule;
  if (keeper.kind === 'backend' && !keeper.present && schedule.active) {
    const detail = keeper.message ? ` ${keeper.message}` : '';
    return {
      level: 'lost',
      text:
        'The batch system no longer holds this schedule (its waiting job ' +
        'was cancelled or lost): nothing runs until it is re-armed.' +
        detail
    };
  }
  if (keeper.kind === 'server') {
    return { level: 'server', text: keeper.message || SERVER_KEPT };
  }
  return null;
}

/** What the dialog says of a schedule on a backend with no scheduler. */
export const SERVER_KEPT =
  'Runs only while this Jupyter server runs: the local backend has no ' +
  'scheduler of its own.';

/** The facts line: backend, queue, where it runs. */
export function describeWhere(schedule: ISchedule): string {
  const target = schedule.image
    ? `image ${schedule.image}`
    : schedule.environment
      ? `environment ${schedule.environment}`
      : schedule.kernel
        ? `kernel ${schedule.kernel}`
        : '';
  return [
    schedule.backend + (schedule.queue ? ` · ${schedule.queue}` : ''),
    target,
    schedule.overlap === 'allow' ? 'overlapping runs allowed' : ''
  ]
    .filter(Boolean)
    .join(' · ');
}
