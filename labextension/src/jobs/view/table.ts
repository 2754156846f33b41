/**
 * The Jobs view's rows from the jobs model: its entries (jobs, sweeps,
 * pipelines) with their facts at a time, an expanded sweep with its runs
 * and an expanded pipeline with its nodes.
 */
import type { JobEntry } from '../entries';
import { isActive, isActiveState } from '../format';
import { JobsModel } from '../model';
import { summarize } from '../sweeps/row';
import {
  TableRow,
  jobFacts,
  nodeFacts,
  pipelineFacts,
  sweepFacts
} from './rows';

/** Whether an entry of the list is still queued or running. */
export function isEntryActive(entry: JobEntry): boolean {
  switch (entry.kind) {
    case 'job':
      return isActive(entry.job);
    case 'sweep':
      return entry.sweep !== null && isActiveState(entry.sweep.state);
    default:
      return isActiveState(entry.pipeline.state);
  }
}

/**
 * The model's list as table rows, at `now`; the pipelines in `expanded`
 * list their nodes.
 */
export function tableRows(
  model: JobsModel,
  now: number,
  expanded: ReadonlySet<string> = new Set()
): TableRow[] {
  return (model.entries ?? []).map((entry): TableRow => {
    if (entry.kind === 'pipeline') {
      const { pipeline } = entry;
      return {
        kind: 'pipeline',
        id: pipeline.id,
        pipeline,
        facts: pipelineFacts(pipeline, now),
        nodes: expanded.has(pipeline.id)
          ? pipeline.nodes.map(node => ({ node, facts: nodeFacts(node, now) }))
          : null
      };
    }
    if (entry.kind === 'job') {
      return {
        kind: 'job',
        id: entry.job.id,
        job: entry.job,
        facts: jobFacts(entry.job, now)
      };
    }
    const summary = summarize(entry);
    const runs = model.isExpanded(entry.id, 'view')
      ? model.runsOf(entry.id)
      : null;
    return {
      kind: 'sweep',
      id: entry.id,
      sweep: entry.sweep,
      facts: sweepFacts(
        {
          name: summary.name,
          state: summary.state,
          backend: entry.sweep?.backend ?? runs?.[0]?.backend ?? '',
          sweep: entry.sweep
        },
        runs ?? [],
        now
      ),
      runs: runs && runs.map(job => ({ job, facts: jobFacts(job, now) }))
    };
  });
}
