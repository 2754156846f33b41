/**
 * "Run again…": the send dialog filled from a job (its snapshot's
 * parameters at the values it ran with, its runtime, backend, queue and
 * resources), to edit before sending with `POST jobs/{id}/rerun`. The
 * snapshot runs, never the notebook file as it is now; a sweep's run sent
 * again on its backend is a new run of that sweep. Submit is off while the
 * request is in flight, so a double click sends once.
 */
import { Notification } from '@jupyterlab/apputils';
import { KernelSpec } from '@jupyterlab/services';

import { messageOf } from '../../api/request';
import type { IJob } from '../../api/types';
import { JobsClient } from '../client';
import { SubmitForm } from './form';
import { SubmitDialog, sendChoices } from './dialog';
import {
  rerunRequest,
  resourceTexts,
  runDefaults,
  targetOf
} from './rerun-values';

export interface IRunAgainOptions {
  client: JobsClient;
  kernelspecs: KernelSpec.IManager;
}

/** Ask how to run `id` again, and send it; the new job, or null. */
export async function runAgain(
  id: string,
  options: IRunAgainOptions
): Promise<IJob | null> {
  const { client } = options;
  let job: IJob;
  try {
    job = await client.getJob(id);
  } catch (error) {
    Notification.error(`Cannot run job ${id} again: ${messageOf(error)}`);
    return null;
  }
  const choices = await sendChoices(
    client,
    options.kernelspecs,
    client.snapshotParameters(id),
    `Cannot run '${job.name}' again`
  );
  if (!choices) {
    return null;
  }
  const read = choices.parameters;
  const form = new SubmitForm({
    path: job.notebook_path,
    kernel: job.kernel,
    ...choices,
    parameters: read ? runDefaults(read, job.parameters) : null,
    last: {
      backend: job.backend,
      queue: job.queue ?? undefined,
      resources: resourceTexts(job.resources)
    },
    capacity: name => client.capacity(name),
    advice: (backend, signal) =>
      client.advice({ backend, notebook_path: job.notebook_path }, signal),
    rerun: { job, target: targetOf(job) }
  });
  form.node.dataset.rerunOf = job.id;
  const dialog = new SubmitDialog(
    form,
    request => client.rerun(job.id, rerunRequest(request)),
    `Run “${job.name}” again`
  );
  const result = await dialog.launch();
  const sent = dialog.job;
  if (!result.button.accept || !sent || !('job_dir' in sent)) {
    return null;
  }
  return sent;
}
