/**
 * The pure rules of the Dask section: how a cluster's workers read, what its
 * row's title says about pending workers, the dashboard's address, and what
 * a workers field asks for.
 */
import type {
  DaskClusterState,
  IDaskCluster,
  IDaskPendingWorker,
  IDaskScaleRequest,
  IDaskWorkers
} from '../api/types';
import { formatStart, ordinal } from '../jobs/format';

/** The badge's tone of each state (none: neutral). */
export const DASK_TONES: Partial<Record<DaskClusterState, string>> = {
  running: 'brand',
  starting: 'quiet',
  stopping: 'warn',
  failed: 'error'
};

/** Whether the cluster is on its way up or down (polled faster then). */
export function isChanging(cluster: IDaskCluster): boolean {
  return cluster.state === 'starting' || cluster.state === 'stopping';
}

/** Whether the cluster has not ended (it can be scaled, shut down). */
export function isLive(cluster: IDaskCluster): boolean {
  return cluster.state === 'starting' || cluster.state === 'running';
}

/** "2 running · 1 pending", "adaptive 0–10: 2 running", "no workers". */
export function describeWorkers(
  workers: IDaskWorkers,
  adapt?: IDaskCluster['adapt']
): string {
  const parts: string[] = [];
  if (workers.running > 0 || workers.pending === 0) {
    parts.push(`${workers.running} running`);
  }
  if (workers.pending > 0) {
    parts.push(`${workers.pending} pending`);
  }
  const counts = parts.join(' · ');
  if (adapt) {
    return `adaptive ${adapt.minimum}–${adapt.maximum}: ${counts}`;
  }
  if (workers.requested !== workers.running + workers.pending) {
    return `${counts} (${workers.requested} asked)`;
  }
  return counts;
}

/**
 * How the cluster runs on its backend: "one allocation until 14:30", "one
 * allocation until 14:30 + 2 worker jobs", "scheduler + 4 worker jobs",
 * "processes on this machine". One allocation ends at its time limit, counted
 * from when its scheduler started (`now` in Unix seconds).
 */
export function describeLayout(
  cluster: IDaskCluster,
  now: number = Date.now() / 1000
): string {
  const { workers } = cluster;
  const plural = (n: number): string => `${n} worker job${n === 1 ? '' : 's'}`;
  const live = isLive(cluster);
  switch (cluster.layout) {
    case 'processes':
      return 'processes on this machine';
    case 'one_allocation': {
      const started = cluster.started_at;
      const until =
        live && started !== null && started !== undefined
          ? ` until ${formatStart(started + cluster.walltime_seconds, now)}`
          : '';
      const apart = workers.running + workers.pending - workers.in_allocation;
      return (
        `one allocation${until}` +
        (live && apart > 0 ? ` + ${plural(apart)}` : '')
      );
    }
    default:
      return live
        ? `scheduler + ${plural(workers.running + workers.pending)}`
        : 'scheduler and worker jobs';
  }
}

/** One pending worker: "dask-1 — queued, 2nd in the queue (Priority)". */
export function describePending(worker: IDaskPendingWorker): string {
  const where =
    worker.state === 'starting'
      ? 'starting, not joined yet'
      : worker.place === null
        ? 'queued'
        : worker.place === 1
          ? 'queued, next in the queue'
          : `queued, ${ordinal(worker.place)} in the queue`;
  const reason = worker.reason ? ` (${worker.reason})` : '';
  return `${worker.name} — ${where}${reason}`;
}

/** The workers line's title: the pending workers one a line, if any. */
export function pendingTitle(workers: IDaskWorkers): string {
  if (workers.pending === 0) {
    return `${workers.running} workers joined the scheduler`;
  }
  const lines = workers.pending_workers.map(describePending);
  const unlisted = workers.pending - workers.pending_workers.length;
  if (unlisted > 0) {
    lines.push(`… and ${unlisted} more`);
  }
  return ['Pending workers:', ...lines].join('\n');
}

/**
 * The dashboard's address in this browser: `dashboard` is a path under the
 * server's base URL (with or without it), or a whole URL.
 */
export function dashboardUrl(baseUrl: string, dashboard: string): string {
  if (/^https?:\/\//.test(dashboard)) {
    return dashboard;
  }
  const base = new URL(baseUrl, 'http://placeholder/');
  const prefix = base.pathname.endsWith('/')
    ? base.pathname
    : `${base.pathname}/`;
  const path = dashboard.startsWith(prefix)
    ? dashboard
    : prefix + dashboard.replace(/^\/+/, '');
  return /^https?:\/\//.test(baseUrl) ? new URL(path, base).href : path;
}

/** The workers fields as typed. */
export interface IWorkerTexts {
  adaptive: boolean;
  workers: string;
  minimum: string;
  maximum: string;
}

/** A whole number in `min..max`, or what is wrong with the text. */
function wholeNumber(
  text: string,
  what: string,
  min: number,
  max: number
): number | string {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) {
    return `${what}: give a whole number`;
  }
  const value = Number(trimmed);
  if (value < min || value > max) {
    return `${what}: between ${min} and ${max}`;
  }
  return value;
}

/** Most workers a field accepts (the server has its own, lower, limit). */
export const MAX_WORKERS = 1000;

/**
 * What the workers fields ask for, `{workers}` or `{adapt}`; throws an
 * Error saying what is wrong.
 */
export function readWorkers(texts: IWorkerTexts): IDaskScaleRequest {
  if (!texts.adaptive) {
    const workers = wholeNumber(texts.workers, 'Workers', 0, MAX_WORKERS);
    if (typeof workers === 'string') {
      throw new Error(workers);
    }
    return { workers };
  }
  const minimum = wholeNumber(texts.minimum, 'Minimum', 0, MAX_WORKERS);
  const maximum = wholeNumber(texts.maximum, 'Maximum', 1, MAX_WORKERS);
  for (const value of [minimum, maximum]) {
    if (typeof value === 'string') {
      throw new Error(value);
    }
  }
  if ((minimum as number) > (maximum as number)) {
    throw new Error(
      `Minimum (${minimum}) is above maximum (${maximum}): lower one of them`
    );
  }
  return { adapt: { minimum: minimum as number, maximum: maximum as number } };
}

/** The fields' texts for a cluster's current scale (the Scale dialog). */
export function workerTexts(cluster: IDaskCluster): IWorkerTexts {
  return cluster.adapt
    ? {
        adaptive: true,
        workers: String(cluster.workers.requested),
        minimum: String(cluster.adapt.minimum),
        maximum: String(cluster.adapt.maximum)
      }
    : {
        adaptive: false,
        workers: String(cluster.workers.requested),
        minimum: '0',
        maximum: String(Math.max(cluster.workers.requested, 1))
      };
}

/** What a 409 `dask_not_installed` asks to add, and to which environment. */
export interface IMissingDask {
  environment: string | null;
  /** Every package to add, as the message names them. */
  packages: string[];
  /** Those the configured conda channels hold. */
  conda: string[];
  /** Those to add from PyPI (the channels lack them). */
  pip: string[];
}

/** The strings of `value`: itself when it is one, or those of a list. */
function strings(value: unknown): string[] {
  const list = Array.isArray(value) ? value : [value];
  return list.filter(
    (item): item is string => typeof item === 'string' && !!item
  );
}

/**
 * Read the details of a `dask_not_installed` refusal: the environment and
 * the packages to add (`distributed` when they say none), each where the
 * server says it comes from (`conda`, `pip`); conda when it does not say.
 */
export function missingDask(
  details: Record<string, unknown>[] | null
): IMissingDask {
  let environment: string | null = null;
  const packages: string[] = [];
  const pip: string[] = [];
  const add = (list: string[], items: string[]) =>
    list.push(...items.filter(item => !list.includes(item)));
  for (const detail of details ?? []) {
    const env = detail['environment'];
    if (typeof env === 'string' && !environment) {
      environment = env;
    }
    for (const key of ['add', 'packages', 'missing', 'conda', 'pip']) {
      add(packages, strings(detail[key]));
    }
    add(pip, strings(detail['pip']));
  }
  if (!packages.length) {
    packages.push('distributed');
  }
  return {
    environment,
    packages,
    conda: packages.filter(item => !pip.includes(item)),
    pip
  };
}
