/**
 * The batch kernel commands. "Kernel on the batch system…" is in each
 * environment row's "⋯" menu (`{ environment: name }`, prefilled; its id is
 * `EnvCommandIDs.batchKernel`, which only shows where this plugin is) and
 * in the palette, where the dialog asks what to run in. Each batch kernel's
 * row calls "New notebook" and "Remove…" with `{ kernel_name }`; from the
 * palette, "Remove a batch kernel…" asks which.
 */
import { Dialog, ICommandPalette, showDialog } from '@jupyterlab/apputils';
import { notebookIcon } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import type { IBatchKernel } from '../api/types';
import { pickOne } from '../components/dialogs/pick';
import { withKernelsShutDown } from '../components/kernels-in-use';
import { MenuEntry, SEPARATOR, rowMenu } from '../components/menu-button';
import { EnvCommandIDs, text } from '../environments/commands';
import { notifyError } from '../environments/notify';
import { BatchKernelsModel } from './model';
import { describeSessions } from './values';

export namespace BatchKernelCommandIDs {
  /** Registered here; the environments' menus name it. */
  export const create = EnvCommandIDs.batchKernel;
  export const newNotebook = 'jupyter-gpu-env:batch-kernel-notebook';
  export const remove = 'jupyter-gpu-env:remove-batch-kernel';
}

/** The "⋯" menu of a batch kernel's row. */
export function batchKernelMenu(kernelName: string): MenuEntry[] {
  return rowMenu({ kernel_name: kernelName }, [
    BatchKernelCommandIDs.newNotebook,
    SEPARATOR,
    BatchKernelCommandIDs.remove
  ]);
}

export function registerBatchKernelCommands(options: {
  commands: CommandRegistry;
  model: BatchKernelsModel;
  palette: ICommandPalette | null;
  category: string;
  /** "Kernel on the batch system…" for an environment, or asking what. */
  create: (environment: string | null) => Promise<IBatchKernel | null>;
  /** Start a new notebook with the kernelspec `kernelName`. */
  openNotebook: (kernelName: string) => Promise<unknown>;
  /** After a removal: the Lab reads the kernelspecs again. */
  removed: () => Promise<unknown>;
}): void {
  const { commands, model } = options;
  const named = (args: ReadonlyPartialJSONObject): string | undefined =>
    text(args, 'kernel_name');
  /** The batch kernel given, or the one chosen in a picker. */
  const kernelOf = async (
    args: ReadonlyPartialJSONObject,
    title: string
  ): Promise<IBatchKernel | null> => {
    const name = named(args);
    if (name) {
      return model.find(name) ?? null;
    }
    await model.load();
    const kernels = model.kernels ?? [];
    if (kernels.length === 0) {
      notifyError(
        title,
        model.error ?? new Error('no kernel is registered on the batch system')
      );
      return null;
    }
    const chosen = await pickOne({
      title,
      label: 'Batch kernel',
      items: kernels.map(kernel => ({
        id: kernel.kernel_name,
        label: `${kernel.display_name} — ${describeSessions(kernel.sessions)}`
      })),
      okLabel: 'Choose',
      testId: 'gpu-env-pick-batch-kernel'
    });
    return chosen ? (model.find(chosen) ?? null) : null;
  };

  commands.addCommand(BatchKernelCommandIDs.create, {
    label: args =>
      args['isPalette']
        ? 'New kernel on the batch system…'
        : 'Kernel on the batch system…',
    caption:
      'A kernel in the Launcher whose kernel runs as a job on a batch ' +
      'backend (local GPUs, SLURM, Kubernetes), with the resources chosen',
    execute: args => options.create(text(args, 'environment') ?? null)
  });
  commands.addCommand(BatchKernelCommandIDs.newNotebook, {
    label: 'New notebook with this kernel',
    caption: 'A new notebook whose kernel runs as a job on the batch system',
    icon: args => (args['isPalette'] ? undefined : notebookIcon),
    execute: async args => {
      const kernel = await kernelOf(args, 'New notebook with a batch kernel');
      if (kernel) {
        await options.openNotebook(kernel.kernel_name);
      }
    }
  });
  commands.addCommand(BatchKernelCommandIDs.remove, {
    label: args => (named(args) ? 'Remove…' : 'Remove a batch kernel…'),
    caption:
      'Remove a kernel on the batch system from the Launcher (its kernels ' +
      'running or waiting are ended first, when you say so)',
    isEnabled: args => !model.isBusy(named(args) ?? ''),
    execute: async args => {
      const kernel = await kernelOf(args, 'Remove a batch kernel');
      if (kernel && (await confirmRemoval(kernel))) {
        await remove(model, kernel);
        await options.removed().catch(() => undefined);
      }
    }
  });
  options.palette?.addItem({
    command: BatchKernelCommandIDs.create,
    category: options.category,
    args: { isPalette: true }
  });
  for (const command of [
    BatchKernelCommandIDs.newNotebook,
    BatchKernelCommandIDs.remove
  ]) {
    options.palette?.addItem({ command, category: options.category });
  }
}

async function confirmRemoval(kernel: IBatchKernel): Promise<boolean> {
  const answer = await showDialog({
    title: `Remove the batch kernel '${kernel.display_name}'?`,
    body:
      'Its card leaves the Launcher, and notebooks that use it will ask ' +
      'for another kernel. Their files stay as saved.',
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Remove' })]
  });
  return answer.button.accept;
}

/** Remove it; with kernels running or waiting, ask to end them first. */
async function remove(
  model: BatchKernelsModel,
  kernel: IBatchKernel
): Promise<void> {
  try {
    await withKernelsShutDown(`'${kernel.display_name}'`, shutdown =>
      model.remove(kernel.kernel_name, shutdown)
    );
  } catch (reason) {
    notifyError(`Could not remove '${kernel.display_name}'`, reason);
  }
}
