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
import type { IJob, INotebookParameters } from '../../api/types';
import { EnvironmentsClient } from '../../environments/client';
import { ImagesClient } from '../../images/client';
import { JobsClient } from '../client';
import { SubmitForm } from './form';
import { SubmitDialog, kernelChoices } from './dialog';
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
  const environments = new EnvironmentsClient(client.serverSettings);
  const images = new ImagesClient(client.serverSettings);
  const [backends, parameters, kernels, envs, imageList] = await Promise.all([
    client.backends().catch((error: unknown) => error),
    client.snapshotParameters(id).catch((error: unknown) => error),
    kernelChoices(options.kernelspecs),
    environments.list().catch(() => null),
    images.list().catch(() => null)
  ]);
  if (!Array.isArray(backends) || backends.length === 0) {
    const why = Array.isArray(backends)
      ? 'the server has no batch backend configured'
      : messageOf(backends);
    Notification.error(`Cannot run '${job.name}' again: ${why}.`);
    return null;
  }
  const read =
    parameters instanceof Error ? null : (parameters as INotebookParameters);
  const form = new SubmitForm({
    path: job.notebook_path,
    kernel: job.kernel,
    parameters: read ? runDefaults(read, job.parameters) : null,
    parametersError: read ? undefined : messageOf(parameters),
    kernels,
    environments: envs,
    images: imageList,
    backends,
    last: {
      backend: job.backend,
      queue: job.queue ?? undefined,
      resources: resourceTexts(job.resources)
    },
    capacity: name => client.capacity(name),
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
  if (!result.button.accept || !sent || 'size' in sent) {
    return null;
  }
  return sent;
}
