/**
 * Pure: the lines of the palette's job and sweep pickers. Each says the
 * name, the state and when ("running, started 14:20", "failed, ended
 * 3 Jun 09:12"), newest first; which jobs are offered depends on the
 * command (only active ones to cancel, only ended ones to run again: an
 * interactive kernel's session is not run again).
 */
import type { IJob, ISweep, JobState, SweepState } from '../../api/types';
import type { IPickItem } from '../../components/dialogs/pick';
import { formatStart, isActiveState, isInteractive } from '../format';

/** Which jobs a picker offers (`ended`: those that can run again). */
export type JobFilter = 'active' | 'ended' | 'any';

/** What a picker needs of a job or a sweep. */
interface IListed {
  id: string;
  name: string;
  state: JobState | SweepState;
  created_at: number;
  started_at?: number | null;
  finished_at: number | null;
}

/** "queued, sent 14:20", "running, started 14:20", "failed, ended 14:22". */
export function describeWhen(item: IListed, now: number): string {
  if (item.state === 'queued') {
    return `queued, sent ${formatStart(item.created_at, now)}`;
  }
  if (isActiveState(item.state)) {
    const started = item.started_at ?? item.created_at;
    return `${item.state}, started ${formatStart(started, now)}`;
  }
  const ended = item.finished_at ?? item.started_at ?? item.created_at;
  return `${item.state}, ended ${formatStart(ended, now)}`;
}

/** The most recent moment of an item: when it ended, started or was sent. */
function latest(item: IListed): number {
  return item.finished_at ?? item.started_at ?? item.created_at;
}

/** Newest first: by when it was sent, then by its latest moment. */
function newestFirst(a: IListed, b: IListed): number {
  return b.created_at - a.created_at || latest(b) - latest(a);
}

function line(item: IListed, now: number): IPickItem {
  return { id: item.id, label: `${item.name} — ${describeWhen(item, now)}` };
}

/** The jobs `filter` offers, newest first (`now` in Unix seconds). */
export function jobChoices(
  jobs: readonly IJob[],
  filter: JobFilter,
  now: number
): IPickItem[] {
  return jobs
    .filter(job =>
      filter === 'any'
        ? true
        : filter === 'active'
          ? isActiveState(job.state)
          : !isActiveState(job.state) && !isInteractive(job)
    )
    .sort(newestFirst)
    .map(job => line(job, now));
}

/** The sweeps, newest first (`now` in Unix seconds). */
export function sweepChoices(
  sweeps: readonly ISweep[],
  now: number
): IPickItem[] {
  return [...sweeps].sort(newestFirst).map(sweep => line(sweep, now));
}
