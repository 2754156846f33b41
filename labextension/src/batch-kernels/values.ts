/**
 * Pure: what a notebook's batch kernel is doing, in words for its toolbar
 * ("Waiting in queue 'gpu', 3rd, estimated start 14:20", "Running on node01
 * · 1 h 52 min left"), times in the browser's own clock; which of a batch
 * kernel's sessions is the notebook's; how often to ask again; when the
 * walltime notice is due; the register dialog's request from its fields.
 */
import type {
  IBatchKernelRequest,
  IBatchKernelSession,
  IResourceRequest,
  JobPriority
} from '../api/types';
import { formatDuration } from '../components/format';
import { formatStart, ordinal } from '../jobs/format';

/** The start of every batch kernelspec's name (the server's `NAME_PREFIX`). */
export const BATCH_KERNEL_PREFIX = 'gpu-env-batch-';

/** Milliseconds between two asks while the kernel waits or starts. */
export const WAITING_INTERVAL = 2 * 1000;
/** Milliseconds between two asks while it runs (or has ended). */
export const RUNNING_INTERVAL = 30 * 1000;
/** Milliseconds between two asks while no session of it is seen yet. */
export const UNSEEN_INTERVAL = 5 * 1000;
/** Seconds before the walltime's end when the notebook is told. */
export const WALLTIME_NOTICE = 10 * 60;

/** Whether a kernelspec name is one of the batch kernels'. */
export function isBatchKernelName(name: string | null | undefined): boolean {
  return !!name && name.startsWith(BATCH_KERNEL_PREFIX);
}

/** What JupyterLab knows of a notebook's kernel, public fields only. */
export interface IKernelSeen {
  /** The running kernel's spec name, once the session has a kernel. */
  running?: string | null;
  /** What the toolbar shows meanwhile: the pending spec's display name. */
  displayName: string;
  /** The notebook's preferred kernel (its metadata, or the Launcher's card). */
  preferred?: string | null;
  /** The kernelspecs JupyterLab knows: name → display name. */
  specs: Record<string, string>;
}

/**
 * The name of the notebook's kernelspec: the running kernel's; while a
 * kernel starts (JupyterLab holds no kernel yet, only the display name of
 * the one it starts), the batch kernelspec shown by that name; else the
 * preferred one.
 */
export function notebookKernelName(seen: IKernelSeen): string {
  if (seen.running) {
    return seen.running;
  }
  if (isBatchKernelName(seen.displayName)) {
    return seen.displayName; // a pending spec not listed yet shows its name
  }
  const shown = Object.entries(seen.specs).find(
    ([name, display]) => isBatchKernelName(name) && display === seen.displayName
  );
  return shown ? shown[0] : (seen.preferred ?? '');
}

/**
 * The notebook's session among its batch kernel's: its kernel's while that
 * has not ended; else one waiting, starting or running for its path (a
 * kernel started again has a new id while JupyterLab still holds the old
 * one); else its kernel's ended one; else the last one ended for its path.
 */
export function sessionFor(
  sessions: readonly IBatchKernelSession[],
  kernelId: string | null,
  path: string
): IBatchKernelSession | null {
  const own = kernelId
    ? sessions.find(session => session.kernel_id === kernelId)
    : undefined;
  if (own && own.state !== 'ended') {
    return own;
  }
  const forPath = sessions.filter(session => session.notebook_path === path);
  const live = forPath.filter(session => session.state !== 'ended');
  if (live.length) {
    return live[live.length - 1];
  }
  return own ?? forPath[forPath.length - 1] ?? null;
}

/**
 * The toolbar's words (`now` in Unix seconds): "Waiting in queue 'gpu',
 * 3rd, estimated start 14:20", "Starting on node01…", "Running on node01 ·
 * 1 h 52 min left", "Ended: Reached its walltime of 2 h."; times in the
 * browser's local time.
 */
export function sessionWords(
  session: IBatchKernelSession,
  now: number
): string {
  const on = session.node ? ` on ${session.node}` : '';
  switch (session.state) {
    case 'waiting': {
      if (!session.job_id) {
        return 'Submitting its job…';
      }
      const parts = [
        session.queue_name
          ? `Waiting in queue '${session.queue_name}'`
          : 'Waiting in the queue'
      ];
      if (session.queue_position) {
        parts.push(ordinal(session.queue_position));
      }
      if (session.estimated_start && session.estimated_start > now) {
        parts.push(
          `estimated start ${formatStart(session.estimated_start, now)}`
        );
      }
      return parts.join(', ');
    }
    case 'starting':
      return `Starting${on}…`;
    case 'running':
      return `Running${on}${timeLeft(session.ends_at, now)}`;
    default:
      if (session.message) {
        return `Ended: ${session.message}`;
      }
      return session.reason ? `Ended (${session.reason})` : 'Ended';
  }
}

/** ` · 1 h 52 min left`, ` · walltime reached`, or nothing without an end. */
function timeLeft(endsAt: number | null, now: number): string {
  if (endsAt === null) {
    return '';
  }
  const left = endsAt - now;
  return left > 0
    ? ` · ${formatDuration(left)} left`
    : ' · its walltime is reached';
}

/** The toolbar's tooltip: why it waits, when it ends, the server's words. */
export function sessionDetail(
  session: IBatchKernelSession,
  now: number
): string {
  const lines: string[] = [];
  if (session.state === 'waiting' && session.pending_reason) {
    lines.push(session.pending_reason);
  }
  if (session.state === 'running' && session.ends_at !== null) {
    lines.push(
      `Its walltime ends at ${formatStart(session.ends_at, now)}; ` +
        'the kernel is stopped then.'
    );
  }
  if (session.restarts > 0) {
    lines.push(
      `Restarted ${session.restarts} time${session.restarts === 1 ? '' : 's'} ` +
        'in the same allocation.'
    );
  }
  if (session.job_id) {
    lines.push(`Job ${session.job_id}`);
  }
  return lines.join('\n');
}

/**
 * How long until the notebook's kernel is asked about again: often while
 * it waits or starts (or JupyterLab is starting it and no session is seen
 * yet), slowly once it runs or has ended.
 */
export function pollInterval(
  session: IBatchKernelSession | null,
  starting: boolean
): number {
  if (session?.state === 'waiting' || session?.state === 'starting') {
    return WAITING_INTERVAL;
  }
  if (!session) {
    return starting ? WAITING_INTERVAL : UNSEEN_INTERVAL;
  }
  return RUNNING_INTERVAL;
}

/** Whether the kernel runs within ten minutes of its walltime's end. */
export function walltimeNoticeDue(
  session: IBatchKernelSession,
  now: number
): boolean {
  const end = session.ends_at;
  return (
    session.state === 'running' &&
    end !== null &&
    now >= end - WALLTIME_NOTICE &&
    now < end
  );
}

/** "The batch kernel of analysis.ipynb ends at 16:20 (its walltime); save your work." */
export function walltimeNotice(
  notebook: string,
  endsAt: number,
  now: number
): string {
  return (
    `The batch kernel of ${notebook} ends at ${formatStart(endsAt, now)} ` +
    '(its walltime); save your work.'
  );
}

/** A batch kernel's sessions that have not ended, counted: "1 running · 2 waiting". */
export function describeSessions(
  sessions: readonly IBatchKernelSession[]
): string {
  const counts = new Map<string, number>();
  for (const session of sessions) {
    if (session.state !== 'ended') {
      counts.set(session.state, (counts.get(session.state) ?? 0) + 1);
    }
  }
  const order = ['running', 'starting', 'waiting'];
  const parts = order
    .filter(state => counts.has(state))
    .map(state => `${counts.get(state)} ${state}`);
  return parts.length ? parts.join(' · ') : 'no kernel running';
}

/** What the register dialog's "Run in" starts at. */
export function defaultTarget(choices: {
  /** The environment the dialog was opened for (its row's menu). */
  environment?: string | null;
  environments: readonly { name: string; has_ipykernel: boolean }[] | null;
  kernels: readonly { name: string }[];
}): string {
  if (choices.environment) {
    return `environment:${choices.environment}`;
  }
  const runnable = choices.environments?.find(env => env.has_ipykernel);
  if (runnable) {
    return `environment:${runnable.name}`;
  }
  const kernel = choices.kernels.find(k => !isBatchKernelName(k.name));
  return kernel ? `kernel:${kernel.name}` : '';
}

/** The register dialog's fields, as read. */
export interface IBatchKernelFields {
  /** The "Run in" choice: `environment:torch`, `kernel:python3`, `image:…`. */
  target: string;
  backend: string;
  /** The resources as the send dialog reads them (`time_limit`: the walltime). */
  resources: IResourceRequest;
  queue?: string;
  priority: JobPriority;
  displayName: string;
}

/**
 * `POST batch-kernels` from the dialog's fields: the resource fields'
 * time limit is the walltime; an empty display name is the server's to
 * make. Throws an Error saying what is missing.
 */
export function batchKernelRequest(
  fields: IBatchKernelFields
): IBatchKernelRequest {
  const [kind, ...rest] = fields.target.split(':');
  const runtime = rest.join(':');
  if (
    !runtime ||
    (kind !== 'environment' && kind !== 'kernel' && kind !== 'image')
  ) {
    throw new Error('Choose what the kernel runs in.');
  }
  const { time_limit: walltime, ...resources } = fields.resources;
  const request: IBatchKernelRequest = {
    [kind]: runtime,
    backend: fields.backend,
    resources,
    priority: fields.priority
  };
  if (walltime !== undefined && walltime !== null && walltime !== '') {
    request.walltime = walltime;
  }
  if (fields.queue) {
    request.queue = fields.queue;
  }
  const name = fields.displayName.trim();
  if (name) {
    request.display_name = name;
  }
  return request;
}
