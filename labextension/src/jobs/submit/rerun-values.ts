/**
 * The pure rules of "Run again…": the dialog's fields filled from a job
 * (its parameters as the fields' starting values, its resources in the
 * forms people type), and the `POST jobs/{id}/rerun` request made from what
 * the dialog holds.
 */
import type { JSONValue } from '@lumino/coreutils';

import type {
  IJob,
  IJobRequest,
  IJobResources,
  INotebookParameter,
  INotebookParameters,
  IRerunRequest,
  IResourceRequest
} from '../../api/types';

/** The kind of field that can show `value` (the cell's, when it can). */
function kindFor(
  kind: INotebookParameter['kind'],
  value: JSONValue
): INotebookParameter['kind'] {
  if (kind === 'int' && typeof value === 'number') {
    return Number.isInteger(value) ? 'int' : 'float';
  }
  if (kind === 'float' && typeof value === 'number') {
    return 'float';
  }
  if (kind === 'str' && typeof value === 'string' && !value.includes('\n')) {
    return 'str';
  }
  if (kind === 'bool' && typeof value === 'boolean') {
    return 'bool';
  }
  return 'literal';
}

/**
 * The snapshot's parameters with the job's values as their defaults: the
 * fields start at what the run had, and only what the user changes is
 * sent (over the job's own values).
 */
export function runDefaults(
  info: INotebookParameters,
  values: Record<string, unknown>
): INotebookParameters {
  return {
    ...info,
    parameters: info.parameters.map(parameter => {
      if (!(parameter.name in values)) {
        return parameter;
      }
      const value = values[parameter.name] as JSONValue;
      const kind = kindFor(parameter.kind, value);
      const text =
        typeof value === 'string' && kind === 'str'
          ? value
          : value === null
            ? 'None'
            : JSON.stringify(value);
      return { ...parameter, kind, default: value, default_text: text };
    })
  };
}

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

/** A job's resources as the dialog's fields take them (`4G`, `1:30:00`). */
export function resourceTexts(resources: IJobResources): IResourceRequest {
  const result: IResourceRequest = {};
  if (resources.cpus !== null && resources.cpus !== undefined) {
    result.cpus = resources.cpus;
  }
  const bytes = resources.memory_bytes;
  if (bytes !== null && bytes !== undefined) {
    result.memory =
      bytes % GIB === 0
        ? `${bytes / GIB}G`
        : bytes % MIB === 0
          ? `${bytes / MIB}M`
          : bytes;
  }
  if (resources.gpus !== null && resources.gpus !== undefined) {
    result.gpus = resources.gpus;
  }
  if (resources.mig_profile) {
    result.mig_profile = resources.mig_profile;
  }
  const seconds = resources.time_limit_seconds;
  if (seconds !== null && seconds !== undefined) {
    const h = Math.floor(seconds / 3600);
    const m = Math.floor((seconds % 3600) / 60);
    const s = seconds % 60;
    result.time_limit =
      s === 0 && h === 0
        ? m
        : `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}`;
  }
  return result;
}

/** The run target the dialog starts at: the job's runtime. */
export function targetOf(job: IJob): string | null {
  if (job.environment) {
    return `environment:${job.environment}`;
  }
  if (job.image) {
    return `image:${job.image}`;
  }
  return job.kernel ? `kernel:${job.kernel}` : null;
}

/**
 * The rerun request from what the dialog holds: the parameters changed
 * from the run's values, and the backend, queue, resources (whole) and
 * runtime as shown, so that a field cleared is cleared.
 */
export function rerunRequest(request: IJobRequest): IRerunRequest {
  const result: IRerunRequest = {
    parameters: request.parameters ?? {},
    backend: request.backend,
    queue: request.queue ?? null,
    resources: request.resources ?? {},
    priority: request.priority ?? 'normal'
  };
  if (request.name) {
    result.name = request.name;
  }
  for (const key of ['kernel', 'environment', 'image'] as const) {
    if (request[key]) {
      result[key] = request[key];
    }
  }
  return result;
}

/** The most characters of a job's name (the server's limit). */
const NAME_MAX = 200;

/**
 * The new job's name by default: the old one with what changed (`walk`
 * run again with alpha 7: `walk alpha=7`; `walk alpha=3` with alpha 7:
 * `walk alpha=7`), so that the two rows are told apart; the old name when
 * nothing changed.
 */
export function rerunName(
  name: string,
  changed: Readonly<Record<string, unknown>>
): string {
  let result = name;
  const added: string[] = [];
  for (const [key, value] of Object.entries(changed)) {
    const token = `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`;
    // Parameter names are identifiers: nothing in them needs escaping.
    const said = new RegExp(`(^|\\s)${key}=\\S*`);
    if (said.test(result)) {
      result = result.replace(said, `$1${token}`);
    } else {
      added.push(token);
    }
  }
  return [result, ...added].join(' ').slice(0, NAME_MAX);
}
