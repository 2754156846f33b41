/**
 * The `jupyter-gpu-env:batch-kernels` plugin: kernels on the batch system.
 * "Kernel on the batch system…" (an environment row's menu, the palette)
 * registers one, whose card then shows in the Launcher; the Jobs section's
 * "Batch kernels" group lists them with their kernels (through
 * `IJobsRegistry`), "New notebook" and "Remove…"; a notebook whose kernel
 * is one shows in its toolbar where the kernel stands (`batch-kernel-status`
 * in `jupyter.lab.toolbars`, schema/batch-kernels.json), with "Stop
 * waiting", and is told ten minutes before the walltime ends. The dialog's
 * backend, queue and resources are remembered in the state database.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  ICommandPalette,
  IToolbarWidgetRegistry,
  Notification
} from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { NotebookPanel } from '@jupyterlab/notebook';
import { IStateDB } from '@jupyterlab/statedb';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import React from 'react';

import type { IBatchKernelSession } from '../api/types';
import { ILastUsed } from '../jobs/submit/resource-fields';
import { IJobsRegistry } from '../jobs/tokens';
import { PALETTE_CATEGORY } from '../sidebar/plugin';
import { BatchKernelsClient } from './client';
import { registerBatchKernelCommands } from './commands';
import { newBatchKernel } from './dialog';
import { BatchKernelsGroup } from './group';
import { BatchKernelsModel } from './model';
import { NotebookBatchKernel } from './status';
import { BatchKernelStatusItem } from './toolbar';
import { walltimeNotice } from './values';

/** The toolbar item's name in `jupyter.lab.toolbars` (schema/batch-kernels.json). */
const TOOLBAR_ITEM = 'batch-kernel-status';
/** The state database key of the dialog's last choices. */
export const BATCH_KERNEL_LAST_USED_KEY =
  'jupyter-gpu-env:batch-kernel-last-used';

export const batchKernelsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-gpu-env:batch-kernels',
  description:
    'Kernels on the batch system: register one, list and remove them, and ' +
    'where a notebook’s batch kernel stands in its toolbar.',
  autoStart: true,
  optional: [IJobsRegistry, ICommandPalette, IToolbarWidgetRegistry, IStateDB],
  activate: (
    app: JupyterFrontEnd,
    registry: IJobsRegistry | null,
    palette: ICommandPalette | null,
    toolbarRegistry: IToolbarWidgetRegistry | null,
    state: IStateDB | null
  ): void => {
    const { commands, serviceManager } = app;
    const { kernelspecs } = serviceManager;
    const client = new BatchKernelsClient(serviceManager.serverSettings);
    const model = new BatchKernelsModel(client);
    const openNotebook = (kernelName: string): Promise<unknown> =>
      commands.execute('notebook:create-new', { kernelName });

    registerBatchKernelCommands({
      commands,
      model,
      palette,
      category: PALETTE_CATEGORY,
      openNotebook,
      removed: () => kernelspecs.refreshSpecs(),
      create: async environment => {
        const made = await newBatchKernel({
          client,
          kernelspecs,
          environment,
          openNotebook,
          // UI state, not a setting: kept in the state database.
          last: async () =>
            ((await state?.fetch(BATCH_KERNEL_LAST_USED_KEY)) as
              ILastUsed | undefined) ?? null,
          remember: last => {
            const value = JSON.parse(
              JSON.stringify(last)
            ) as ReadonlyPartialJSONObject;
            state?.save(BATCH_KERNEL_LAST_USED_KEY, value).catch(reason => {
              console.warn('jupyter-gpu-env: cannot remember choices.', reason);
            });
          }
        });
        if (made) {
          model.add(made);
        }
        return made;
      }
    });

    registry?.addGroup({
      id: 'batch-kernels',
      component: props =>
        React.createElement(BatchKernelsGroup, {
          model,
          commands,
          now: props.now
        }),
      viewed: visible => {
        model.viewed = visible;
      },
      refresh: () => model.refresh()
    });

    // Each notebook's kernel told once of its walltime's end.
    const warned = new Set<string>();
    toolbarRegistry?.addFactory<NotebookPanel>(
      'Notebook',
      TOOLBAR_ITEM,
      panel =>
        new BatchKernelStatusItem(
          new NotebookBatchKernel({
            client,
            sessionContext: panel.sessionContext,
            path: () => panel.context.localPath,
            warned,
            onWalltime: session => tellWalltime(panel, session)
          })
        )
    );
  }
};

/** "The batch kernel of X ends at 16:20 (its walltime); save your work." */
function tellWalltime(
  panel: NotebookPanel,
  session: IBatchKernelSession
): void {
  if (session.ends_at === null) {
    return;
  }
  const name = PathExt.basename(panel.context.localPath);
  Notification.warning(
    walltimeNotice(name, session.ends_at, Date.now() / 1000),
    {
      autoClose: false,
      actions: [
        {
          label: 'Save',
          caption: `Save ${name} now`,
          callback: () => void panel.context.save()
        }
      ]
    }
  );
}
