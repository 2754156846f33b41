/**
 * "Run after…" in the send dialog, pure: the `POST pipelines` request that
 * runs the dialog's notebook after an existing job, and the ids it uses
 * (node ids match `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`).
 */
import type { IJob, IJobRequest, IPipelineRequest } from '../api/types';

const ID_MAX = 64;

/**
 * A valid node id made of `text`: other characters become `_`, a leading
 * digit or `-` gets `_` before it, cut to 64; `fallback` when nothing is
 * left.
 */
export function nodeIdOf(text: string, fallback = 'node'): string {
  let id = text.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+(?=.)/, '');
  if (!/^[A-Za-z_]/.test(id)) {
    id = `_${id}`;
  }
  id = id.slice(0, ID_MAX);
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(id) && id !== '_' ? id : fallback;
}

/** The notebook's name without folder and `.ipynb`. */
export function notebookStem(path: string): string {
  return (path.split('/').pop() ?? path).replace(/\.ipynb$/i, '') || path;
}

/**
 * `POST pipelines` for "run `request`'s notebook after `job`": named as the
 * user named the run (else after the notebook), the job as an `after_jobs`
 * key made from its name, and one node, the notebook, that waits for it (the
 * key differs from the node's id).
 */
export function runAfterRequest(
  request: IJobRequest,
  job: Pick<IJob, 'id' | 'name'>
): IPipelineRequest {
  const stem = notebookStem(request.notebook_path);
  const node = nodeIdOf(stem, 'notebook');
  let key = nodeIdOf(job.name, 'job');
  if (key === node) {
    key = nodeIdOf(`${key.slice(0, ID_MAX - 7)}_before`);
  }
  return {
    name: request.name?.trim() || stem,
    after_jobs: { [key]: job.id },
    nodes: [{ ...request, id: node, after: [key] }]
  };
}

/**
 * The jobs one may run after: queued or running, newest first; not the
 * nodes of a pipeline (what follows one belongs in that pipeline).
 */
export function runAfterChoices(jobs: readonly IJob[]): IJob[] {
  return jobs
    .filter(job => job.state === 'queued' || job.state === 'running')
    .filter(job => !job.pipeline_id)
    .sort((a, b) => b.created_at - a.created_at);
}
