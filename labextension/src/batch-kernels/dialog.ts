/**
 * "Kernel on the batch system…": ask, register (`POST batch-kernels`), and
 * once the server has written the kernelspec, have JupyterLab read the
 * kernelspecs again so that its card shows in the Launcher at once, and say
 * so with "New notebook" to start one with it. A refusal (404, 409) shows
 * in the dialog with the server's words, everything typed kept.
 */
import { Notification } from '@jupyterlab/apputils';
import { KernelSpec } from '@jupyterlab/services';

import type { IBatchKernel, IBatchKernelRequest } from '../api/types';
import { SendingDialog } from '../components/dialogs/sending';
import { EnvironmentsClient } from '../environments/client';
import { notifyError } from '../environments/notify';
import { ImagesClient } from '../images/client';
import { kernelChoices } from '../jobs/submit/dialog';
import { ILastUsed } from '../jobs/submit/resource-fields';
import { BatchKernelsClient } from './client';
import { BatchKernelForm } from './form';
import { isBatchKernelName } from './values';

export interface INewBatchKernelOptions {
  client: BatchKernelsClient;
  kernelspecs: KernelSpec.IManager;
  /** The environment to run in (its row's menu); chosen in the dialog without. */
  environment: string | null;
  last: () => Promise<ILastUsed | null>;
  remember: (last: ILastUsed) => void;
  /** Start a new notebook with the kernelspec `kernelName`. */
  openNotebook: (kernelName: string) => Promise<unknown>;
}

/** Ask and register; the batch kernel, or null when cancelled. */
export async function newBatchKernel(
  options: INewBatchKernelOptions
): Promise<IBatchKernel | null> {
  const { client } = options;
  const environments = new EnvironmentsClient(client.serverSettings);
  const images = new ImagesClient(client.serverSettings);
  const [backends, kernels, envs, imageList, last] = await Promise.all([
    client.backends().catch((error: unknown) => error),
    kernelChoices(options.kernelspecs),
    environments.list().catch(() => null),
    images.list().catch(() => null),
    options.last().catch(() => null)
  ]);
  if (!Array.isArray(backends) || backends.length === 0) {
    notifyError(
      'Cannot register a kernel on the batch system',
      Array.isArray(backends)
        ? new Error('the server has no batch backend configured')
        : backends
    );
    return null;
  }
  const form = new BatchKernelForm({
    environment: options.environment,
    // A batch kernel runs an ordinary kernel, never another batch kernel.
    kernels: kernels.filter(k => !isBatchKernelName(k.name)),
    kernel: null,
    environments: envs,
    images: imageList,
    backends,
    last,
    capacity: name => client.capacity(name)
  });
  const dialog = new SendingDialog<IBatchKernelRequest, IBatchKernel>({
    title: 'Kernel on the batch system',
    body: form,
    accept: 'Register',
    send: request => client.create(request)
  });
  dialog.addClass('jp-GpuEnv-batchKernelDialog');
  const result = await dialog.launch();
  const made = dialog.result;
  if (!result.button.accept || !made) {
    return null;
  }
  options.remember(form.lastUsed());
  // The Lab's kernelspecs are polled: read them now, so the card shows.
  await options.kernelspecs.refreshSpecs().catch(() => undefined);
  Notification.success(
    `'${made.display_name}' is in the Launcher: a notebook started with ` +
      `it runs its kernel as a job (${made.where}).`,
    {
      autoClose: 10000,
      actions: [
        {
          label: 'New notebook',
          caption: `A new notebook with the kernel '${made.display_name}'`,
          callback: () => void options.openNotebook(made.kernel_name)
        }
      ]
    }
  );
  return made;
}
