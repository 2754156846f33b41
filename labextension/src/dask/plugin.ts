/**
 * The `jupyter-gpu-env:dask` plugin: the sidebar's "Dask" section (after
 * Jobs), the Dask commands in the palette, the dashboard tabs. The new
 * cluster dialog's backend, queue and resources are remembered in the
 * state database.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IStateDB } from '@jupyterlab/statedb';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { PALETTE_CATEGORY } from '../sidebar/plugin';
import { IGpuEnvSidebar } from '../sidebar/tokens';
import { ILastUsed } from '../jobs/submit/resource-fields';
import { DaskActions } from './actions';
import { DaskClient } from './client';
import { registerDaskCommands } from './commands';
import { DaskModel } from './model';
import { DaskSection } from './section';

/** Where the section stands among the sidebar's: after Jobs. */
export const DASK_SECTION_RANK = 450;
/** The state database key of the new cluster dialog's last choices. */
export const DASK_LAST_USED_KEY = 'jupyter-gpu-env:dask-last-used';

export const daskPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-gpu-env:dask',
  description:
    'Dask clusters on the batch backends: the Dask section of the GPU Env sidebar and its commands.',
  autoStart: true,
  requires: [IGpuEnvSidebar],
  optional: [INotebookTracker, ICommandPalette, IStateDB],
  activate: (
    app: JupyterFrontEnd,
    sidebar: IGpuEnvSidebar,
    notebooks: INotebookTracker | null,
    palette: ICommandPalette | null,
    state: IStateDB | null
  ): void => {
    const { commands, serviceManager } = app;
    // Asked while the section is visible, faster while a cluster changes.
    const model: DaskModel = new DaskModel(
      new DaskClient(serviceManager.serverSettings),
      { visible: (): boolean => section.isVisible }
    );
    const section: DaskSection = new DaskSection(model, commands);
    const actions = new DaskActions({
      app,
      model,
      notebooks,
      // UI state, not a setting: kept in the state database.
      last: async () =>
        ((await state?.fetch(DASK_LAST_USED_KEY)) as ILastUsed | undefined) ??
        null,
      remember: last => {
        const value = JSON.parse(
          JSON.stringify(last)
        ) as ReadonlyPartialJSONObject;
        state?.save(DASK_LAST_USED_KEY, value).catch(reason => {
          console.warn('jupyter-gpu-env: cannot remember choices.', reason);
        });
      },
      reveal: () => sidebar.reveal('dask')
    });
    const refreshEnabled = (): void => {
      commands.notifyCommandChanged();
    };
    notebooks?.currentChanged.connect(refreshEnabled);
    model.changed.connect(refreshEnabled);
    registerDaskCommands({
      commands,
      actions,
      palette,
      category: PALETTE_CATEGORY
    });
    sidebar.addSection({
      id: 'dask',
      title: 'Dask',
      rank: DASK_SECTION_RANK,
      widget: section,
      refresh: () => model.refresh()
    });
  }
};
