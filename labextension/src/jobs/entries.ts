/**
 * The Jobs section's list as one column: jobs that are no sweep's run and
 * sweeps (each once, however many runs it has), merged newest first from
 * two paged lists.
 */
import type { IJob, ISweep } from '../api/types';

/** An entry of the list: a job, or a sweep standing for its runs. */
export type JobEntry =
  | { kind: 'job'; job: IJob }
  | { kind: 'sweep'; id: string; sweep: ISweep | null; runs: IJob[] };

/** One page of a paged list, and how many the server has in all. */
export interface IPage<T> {
  items: T[];
  total: number;
}

/**
 * Jobs and sweeps newest first; `unlisted` are sweeps known here (just
 * submitted) but on no page yet. Where one list has more pages, what is
 * older than its last entry is left out: it waits for "show more", so
 * that the other list does not seem to have nothing older.
 */
export function mergeEntries(
  jobs: IPage<IJob>,
  sweeps: IPage<ISweep>,
  unlisted: ISweep[] = []
): JobEntry[] {
  let boundary = -Infinity;
  for (const page of [jobs, sweeps] as IPage<{ created_at: number }>[]) {
    const last = page.items[page.items.length - 1];
    if (page.total > page.items.length && last) {
      boundary = Math.max(boundary, last.created_at);
    }
  }
  const dated: [number, JobEntry][] = [
    ...jobs.items.map(
      job => [job.created_at, { kind: 'job', job }] as [number, JobEntry]
    ),
    ...[...unlisted, ...sweeps.items].map(
      sweep =>
        [
          sweep.created_at,
          { kind: 'sweep', id: sweep.id, sweep, runs: [] }
        ] as [number, JobEntry]
    )
  ].filter(([at]) => at >= boundary);
  dated.sort((a, b) => b[0] - a[0]);
  return dated.map(([, entry]) => entry);
}
