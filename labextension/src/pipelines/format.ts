/**
 * Pure formatting of pipelines and their nodes: progress (a job's cells,
 * a sweep's runs), duration, the nodes ended, tones of the state badges,
 * and which states are still active.
 */
import type {
  IPipeline,
  IPipelineNode,
  PipelineNodeState,
  PipelineState
} from '../api/types';
import { formatDuration } from '../jobs/format';

/** A node that has not ended (waiting for its parents, queued, running). */
export function isNodeActive(state: PipelineNodeState): boolean {
  return state === 'waiting' || state === 'queued' || state === 'running';
}

/** A pipeline that may still change on its own. */
export function isPipelineActive(state: PipelineState): boolean {
  return state === 'queued' || state === 'running';
}

/** The badge tones of the jobs rows, with a node's own states. */
/** A node's progress: the share done (null: not known) and it in words. */
export interface INodeProgress {
  fraction: number | null;
  text: string;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * A sweep node: its runs ended of all; a job node: its cells run of all
 * (once the runner counted them); null when there is nothing to say yet.
 */
export function nodeProgress(node: IPipelineNode): INodeProgress | null {
  if (node.kind === 'sweep') {
    const total = Object.values(node.counts).reduce((a, b) => a + b, 0);
    if (total === 0) {
      return null;
    }
    const ended =
      (node.counts.succeeded ?? 0) +
      (node.counts.failed ?? 0) +
      (node.counts.cancelled ?? 0);
    return {
      fraction: ended / total,
      text: `${ended} of ${plural(total, 'run')}`
    };
  }
  if (node.cells_total > 0) {
    const done = Math.min(node.cells_done, node.cells_total);
    return {
      fraction: done / node.cells_total,
      text: `${done}/${node.cells_total} cells`
    };
  }
  return null;
}

/**
 * How long the node ran (until now while it runs): `40 s`, `12 min`; null
 * before it started.
 */
export function nodeDuration(node: IPipelineNode, now: number): string | null {
  if (node.started_at === null) {
    return null;
  }
  const end = node.finished_at ?? now;
  return formatDuration(Math.max(0, end - node.started_at));
}

/** Nodes that have ended (skipped included) and all nodes. */
export function nodesEnded(pipeline: IPipeline): {
  ended: number;
  total: number;
} {
  const total = pipeline.nodes.length;
  const ended = pipeline.nodes.filter(node => !isNodeActive(node.state)).length;
  return { ended, total };
}

/** The node counts in words, in a fixed order: `2 succeeded, 1 running`. */
export function describeNodeCounts(
  counts: Partial<Record<string, number>>
): string {
  const order: PipelineNodeState[] = [
    'succeeded',
    'failed',
    'cancelled',
    'skipped',
    'running',
    'queued',
    'waiting'
  ];
  return order
    .filter(state => (counts[state] ?? 0) > 0)
    .map(state => `${counts[state]} ${state}`)
    .join(', ');
}

/** What a node's kind means, for its tooltip. */
export function describeKind(node: IPipelineNode): string {
  switch (node.kind) {
    case 'sweep':
      return `Sweep of ${node.notebook_path}`;
    case 'external':
      return `Earlier job ${node.job_id ?? ''} (${node.notebook_path})`;
    default:
      return `Job of ${node.notebook_path}`;
  }
}
