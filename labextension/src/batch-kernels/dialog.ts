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
import { runChoices } from '../jobs/submit/dialog';
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
  const choices = await runChoices(
    client,
    options.kernelspecs,
    options.last,
    'Cannot register a kernel on the batch system'
  );
  if (!choices) {
    return null;
  }
  const {
    backends,
    kernels,
    environments: envs,
    images: imageList,
    last
  } = choices;
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
