/**
 * The Jobs view's table, as pure data: what each column shows of a job, a
 * sweep or a pipeline (its facts), the text and state filters, and the
 * sort by a column. A sweep or a pipeline is sorted and filtered as one
 * row; its runs or nodes stay under it, in its own order.
 */
import type {
  IJob,
  IJobGpuUsage,
  IPipeline,
  IPipelineNode,
  ISweep,
  JobState,
  PipelineNodeState
} from '../../api/types';
import { formatBytesOf, isActiveState } from '../format';
import { describeParameters } from '../sweeps/values';

/** The sortable columns. */
export type ColumnKey =
  | 'name'
  | 'state'
  | 'backend'
  | 'queue'
  | 'started'
  | 'duration'
  | 'gpu'
  | 'energy'
  | 'parameters';

export type SortDirection = 'ascending' | 'descending';

export interface ISort {
  key: ColumnKey;
  direction: SortDirection;
}

/** Which rows are shown: `state` is a state, `active` or `all`. */
export interface IFilter {
  text: string;
  state: JobState | 'active' | 'all';
}

export const NO_FILTER: IFilter = { text: '', state: 'all' };

/** A row's state: a job's, a sweep's, a pipeline's or a node's. */
export type RowState = JobState | PipelineNodeState;

/** What a row's cells show, as values to sort by. */
export interface IRowFacts {
  name: string;
  state: RowState;
  backend: string;
  /** Place in the backend's queue (1: next), null when not queued. */
  queue: number | null;
  /** Unix seconds, null until it starts. */
  started: number | null;
  /** Seconds run (so far), null until it starts. */
  duration: number | null;
  /** Mean GPU utilization, percent; null without samples. */
  gpu: number | null;
  /** Joules its GPUs drew (a job's), null where not measured. */
  energy: number | null;
  parameters: string;
  /** What the text filter searches, lower case. */
  search: string;
}

/** A row of the table: a job, or a sweep with its runs (when asked). */
export type TableRow =
  | { kind: 'job'; id: string; job: IJob; facts: IRowFacts }
  | {
      kind: 'sweep';
      id: string;
      sweep: ISweep | null;
      facts: IRowFacts;
      /** The runs listed, null until asked (collapsed, or not answered). */
      runs: { job: IJob; facts: IRowFacts }[] | null;
    }
  | {
      kind: 'pipeline';
      id: string;
      pipeline: IPipeline;
      facts: IRowFacts;
      /** The nodes listed, in the pipeline's order; null while collapsed. */
      nodes: { node: IPipelineNode; facts: IRowFacts }[] | null;
    };

/** Whether a row's state may still change: queued, running or waiting. */
export function isActiveRowState(state: RowState): boolean {
  return state === 'waiting' || isActiveState(state as JobState);
}

function searchText(parts: (string | null | undefined)[]): string {
  return parts.filter(Boolean).join('\n').toLowerCase();
}

/**
 * A job's GPU use in the table: `23% avg · 81% peak · 3.1 of 80 GiB`
 * (utilization mean and peak, peak memory of the total); null without
 * samples.
 */
export function describeGpuMeanPeak(gpu: IJobGpuUsage | null): string | null {
  if (!gpu || !gpu.available || gpu.samples <= 0) {
    return null;
  }
  const parts: string[] = [];
  if (gpu.mean_utilization_percent !== null) {
    parts.push(`${Math.round(gpu.mean_utilization_percent)}% avg`);
  }
  if (gpu.peak_utilization_percent !== null) {
    parts.push(`${Math.round(gpu.peak_utilization_percent)}% peak`);
  }
  if (gpu.peak_memory_bytes !== null && gpu.memory_total_bytes) {
    parts.push(formatBytesOf(gpu.peak_memory_bytes, gpu.memory_total_bytes));
  }
  return parts.length ? parts.join(' · ') : null;
}

/** The facts of a job's row at `now` (Unix seconds). */
export function jobFacts(job: IJob, now: number): IRowFacts {
  const parameters = describeParameters(job.parameters);
  const gpu = job.gpu;
  return {
    name: job.name,
    state: job.state,
    backend: job.backend,
    queue:
      job.state === 'queued' && job.queue_position !== null
        ? job.queue_position
        : null,
    started: job.started_at,
    duration:
      job.started_at === null
        ? null
        : Math.max(0, (job.finished_at ?? now) - job.started_at),
    gpu:
      gpu && gpu.available && gpu.samples > 0
        ? gpu.mean_utilization_percent
        : null,
    energy: gpu && gpu.available ? gpu.energy_joules : null,
    parameters,
    search: searchText([job.name, job.notebook_path, parameters])
  };
}

/**
 * The facts of a sweep's row: its record's, else its runs'; it started
 * when its first run did; waiting whole, its place is its first queued
 * run's (once it runs, its waiting runs wait for its own, not the queue).
 */
export function sweepFacts(
  summary: {
    name: string;
    state: JobState;
    backend: string;
    sweep: ISweep | null;
  },
  runs: IJob[],
  now: number
): IRowFacts {
  const { sweep } = summary;
  const starts = runs
    .map(run => run.started_at)
    .filter((at): at is number => at !== null);
  const started = starts.length ? Math.min(...starts) : null;
  const ends = runs.map(run => run.finished_at);
  const finished =
    sweep?.finished_at ??
    (runs.length > 0 && !runs.some(run => isActiveState(run.state))
      ? Math.max(...ends.map(at => at ?? 0))
      : null);
  const places = runs
    .filter(run => run.state === 'queued' && run.queue_position !== null)
    .map(run => run.queue_position as number);
  const varied = sweep?.varied ?? [];
  const parameters = varied.length ? `varies ${varied.join(', ')}` : '';
  return {
    name: summary.name,
    state: summary.state,
    backend: summary.backend,
    queue:
      summary.state === 'queued' && places.length ? Math.min(...places) : null,
    started,
    duration:
      started === null ? null : Math.max(0, (finished ?? now) - started),
    gpu: null,
    energy: null,
    parameters,
    search: searchText([
      summary.name,
      sweep?.notebook_path,
      parameters,
      sweep ? describeParameters(sweep.parameters) : null
    ])
  };
}

/** The different values of `values`, in their first order. */
function distinct(values: string[]): string[] {
  return [...new Set(values.filter(Boolean))];
}

/**
 * The facts of a pipeline's row: its nodes' backends, its first node's
 * start, until it ended (or now); the text filter finds it by its name,
 * its file, and its nodes' names and notebooks.
 */
export function pipelineFacts(pipeline: IPipeline, now: number): IRowFacts {
  const { nodes } = pipeline;
  const starts = nodes
    .map(node => node.started_at)
    .filter((at): at is number => at !== null);
  const started = starts.length ? Math.min(...starts) : null;
  const ended = !isActiveState(pipeline.state);
  const ends = nodes
    .map(node => node.finished_at)
    .filter((at): at is number => at !== null);
  const finished =
    pipeline.finished_at ??
    (ended && ends.length ? Math.max(...ends) : null) ??
    (ended ? pipeline.cancelled_at : null);
  return {
    name: pipeline.name,
    state: pipeline.state,
    backend: distinct(nodes.map(node => node.backend)).join(', '),
    queue: null,
    started,
    duration:
      started === null ? null : Math.max(0, (finished ?? now) - started),
    gpu: null,
    energy: null,
    parameters: '',
    search: searchText([
      pipeline.name,
      pipeline.file_path,
      ...nodes.flatMap(node => [node.id, node.name, node.notebook_path])
    ])
  };
}

/** The facts of a pipeline node's row, under its pipeline. */
export function nodeFacts(node: IPipelineNode, now: number): IRowFacts {
  return {
    name: node.name,
    state: node.state,
    backend: node.backend,
    queue: null,
    started: node.started_at,
    duration:
      node.started_at === null
        ? null
        : Math.max(0, (node.finished_at ?? now) - node.started_at),
    gpu: null,
    energy: null,
    parameters: '',
    search: searchText([node.id, node.name, node.notebook_path])
  };
}

/** Whether a row's own facts pass `filter`. */
export function matches(facts: IRowFacts, filter: IFilter): boolean {
  const { state } = filter;
  if (state === 'active') {
    if (!isActiveRowState(facts.state)) {
      return false;
    }
  } else if (state !== 'all' && state !== facts.state) {
    return false;
  }
  const words = filter.text.toLowerCase().split(/\s+/).filter(Boolean);
  return words.every(word => facts.search.includes(word));
}

/**
 * The rows that pass `filter`. A sweep (a pipeline) stays when it passes,
 * with all its runs (nodes), or when some of its listed runs (nodes) pass,
 * with only those.
 */
export function filterRows(rows: TableRow[], filter: IFilter): TableRow[] {
  const kept: TableRow[] = [];
  for (const row of rows) {
    if (row.kind === 'job') {
      if (matches(row.facts, filter)) {
        kept.push(row);
      }
      continue;
    }
    if (matches(row.facts, filter)) {
      kept.push(row);
      continue;
    }
    if (row.kind === 'pipeline') {
      const nodes = (row.nodes ?? []).filter(n => matches(n.facts, filter));
      if (nodes.length > 0) {
        kept.push({ ...row, nodes });
      }
      continue;
    }
    const runs = (row.runs ?? []).filter(run => matches(run.facts, filter));
    if (runs.length > 0) {
      kept.push({ ...row, runs });
    }
  }
  return kept;
}

/** The order of states: active first, then how they ended. */
const STATE_ORDER: RowState[] = [
  'running',
  'queued',
  'waiting',
  'failed',
  'cancelled',
  'skipped',
  'succeeded'
];

/** Compare two facts by `key`, ascending; unknown values (null) last. */
export function compareFacts(
  a: IRowFacts,
  b: IRowFacts,
  key: ColumnKey
): number {
  if (key === 'state') {
    return STATE_ORDER.indexOf(a.state) - STATE_ORDER.indexOf(b.state);
  }
  const x = a[key];
  const y = b[key];
  if (x === y) {
    return 0;
  }
  if (x === null || x === '') {
    return 1;
  }
  if (y === null || y === '') {
    return -1;
  }
  if (typeof x === 'number' && typeof y === 'number') {
    return x - y;
  }
  return String(x).localeCompare(String(y), undefined, {
    numeric: true,
    sensitivity: 'base'
  });
}

/**
 * `rows` sorted by `sort` (stable: equal rows keep their order, newest
 * first); rows without a value for the column stay last either way.
 */
export function sortRows(rows: TableRow[], sort: ISort | null): TableRow[] {
  if (!sort) {
    return rows;
  }
  const sign = sort.direction === 'ascending' ? 1 : -1;
  return rows
    .map((row, index) => ({ row, index }))
    .sort((a, b) => {
      const blankA = isBlank(a.row.facts, sort.key);
      const blankB = isBlank(b.row.facts, sort.key);
      if (blankA !== blankB) {
        return blankA ? 1 : -1;
      }
      return (
        sign * compareFacts(a.row.facts, b.row.facts, sort.key) ||
        a.index - b.index
      );
    })
    .map(({ row }) => row);
}

function isBlank(facts: IRowFacts, key: ColumnKey): boolean {
  const value = facts[key];
  return value === null || value === '';
}

/** The next sort after a click on `key`'s header. */
export function nextSort(current: ISort | null, key: ColumnKey): ISort {
  if (current?.key === key) {
    return {
      key,
      direction: current.direction === 'ascending' ? 'descending' : 'ascending'
    };
  }
  // Times and figures: the latest or largest first.
  const numeric = ['started', 'duration', 'gpu', 'energy'].includes(key);
  return { key, direction: numeric ? 'descending' : 'ascending' };
}
