/**
 * The Jobs section's list as one column: jobs that are no sweep's run nor
 * a pipeline's node, sweeps (each once, however many runs it has) and
 * pipelines (each once, however many nodes it has), merged newest first
 * from three paged lists.
 */
import type { IJob, IPipeline, ISweep } from '../api/types';

/** An entry of the list: a job, a sweep for its runs, a pipeline for its nodes. */
export type JobEntry =
  | { kind: 'job'; job: IJob }
  | { kind: 'sweep'; id: string; sweep: ISweep | null; runs: IJob[] }
  | { kind: 'pipeline'; id: string; pipeline: IPipeline };

/** One page of a paged list, and how many the server has in all. */
export interface IPage<T> {
  items: T[];
  total: number;
}

/**
 * Jobs, sweeps and pipelines newest first; `unlisted` are sweeps known here
 * (just submitted) but on no page yet, `unlistedPipelines` the same for
 * pipelines (a listed one wins over its copy). Where one list has more
 * pages, what is older than its last entry is left out: it waits for "show
 * more", so that the other lists do not seem to have nothing older.
 */
export function mergeEntries(
  jobs: IPage<IJob>,
  sweeps: IPage<ISweep>,
  unlisted: ISweep[] = [],
  pipelines: IPage<IPipeline> = { items: [], total: 0 },
  unlistedPipelines: IPipeline[] = []
): JobEntry[] {
  let boundary = -Infinity;
  const pages = [jobs, sweeps, pipelines] as IPage<{ created_at: number }>[];
  for (const page of pages) {
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
    ),
    ...pipelineEntries(pipelines.items, unlistedPipelines)
  ].filter(([at]) => at >= boundary);
  dated.sort((a, b) => b[0] - a[0]);
  return dated.map(([, entry]) => entry);
}

/** Each pipeline once, the listed copy over one just submitted. */
function pipelineEntries(
  listed: IPipeline[],
  unlisted: IPipeline[]
): [number, JobEntry][] {
  const ids = new Set(listed.map(pipeline => pipeline.id));
  return [...unlisted.filter(p => !ids.has(p.id)), ...listed].map(pipeline => [
    pipeline.created_at,
    { kind: 'pipeline', id: pipeline.id, pipeline }
  ]);
}
