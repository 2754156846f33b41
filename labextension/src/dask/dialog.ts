/**
 * The Dask dialogs that ask the server: "New cluster…" and "Scale…". Each
 * stays open when the server refuses (400, 409) with its message and what
 * was typed; a 409 `dask_not_installed` offers to add `distributed` (and
 * `bokeh`) to the environment through its packages flow, and opens again
 * after it. They close once the server answers with the cluster.
 */
import { KernelSpec } from '@jupyterlab/services';
import { CommandRegistry } from '@lumino/commands';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { ApiError } from '../api/request';
import { SendingDialog } from '../components/dialogs/sending';
import type {
  IDaskCluster,
  IDaskClusterRequest,
  IDaskScaleRequest
} from '../api/types';
import { h } from '../components/form';
import { EnvCommandIDs } from '../environments/commands';
import { notifyError } from '../environments/notify';
import { runChoices } from '../jobs/submit/dialog';
import { ILastUsed } from '../jobs/submit/resource-fields';
import { DaskClient } from './client';
import { ClusterForm, DaskFormBody, IClusterTyped, WorkerFields } from './form';
import { missingDask, workerTexts } from './format';

export interface INewClusterOptions {
  client: DaskClient;
  commands: CommandRegistry;
  kernelspecs: KernelSpec.IManager;
  /** The active notebook's kernel name, selected first. */
  kernel: string | null;
  last: () => Promise<ILastUsed | null>;
  remember: (last: ILastUsed) => void;
}

/**
 * A button that adds the missing packages through the environment's
 * packages flow (`add(args)`: the command's arguments, conda and PyPI specs
 * each in its field); none when the environment is not the user's own.
 */
function addPackagesButton(
  commands: CommandRegistry,
  error: ApiError,
  add: (args: ReadonlyPartialJSONObject) => void
): HTMLElement[] {
  // `dask_versions_differ` names the version that matches distributed.
  if (
    error.reason !== 'dask_not_installed' &&
    error.reason !== 'dask_versions_differ'
  ) {
    return [];
  }
  const missing = missingDask(error.details);
  if (!missing.environment) {
    return [];
  }
  const args: ReadonlyPartialJSONObject = {
    environment: missing.environment,
    add: missing.conda,
    pip_add: missing.pip
  };
  if (!commands.isVisible(EnvCommandIDs.editPackages, args)) {
    return [
      h(
        'div',
        { class: 'jp-GpuEnv-fieldHint' },
        `'${missing.environment}' is not one of your environments: ask its ` +
          `owner to add ${missing.packages.join(', ')}, or choose another.`
      )
    ];
  }
  const button = h(
    'button',
    {
      type: 'button',
      class: 'jp-Button jp-mod-styled jp-mod-accept jp-mod-small',
      'data-testid': 'gpu-env-dask-add-packages'
    },
    `Add ${missing.packages.join(', ')} to '${missing.environment}'…`
  );
  button.addEventListener('click', () => {
    button.disabled = true;
    add(args);
  });
  return [button];
}

/**
 * "New cluster…": ask, start it; the cluster, or null. Adding a missing
 * package closes the dialog (JupyterLab shows one dialog at a time: the
 * packages dialog would wait behind it), runs the packages flow and opens
 * it again with everything typed, once the change has ended or was backed
 * out of.
 */
export async function newCluster(
  options: INewClusterOptions
): Promise<IDaskCluster | null> {
  const { client, commands } = options;
  const choices = await runChoices(
    client,
    options.kernelspecs,
    options.last,
    'Cannot start a Dask cluster'
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
  let typed: IClusterTyped | undefined;
  for (;;) {
    const form = new ClusterForm({
      kernel: options.kernel,
      kernels,
      environments: envs,
      images: imageList,
      backends,
      last,
      typed
    });
    let adding: ReadonlyPartialJSONObject | null = null;
    const dialog: SendingDialog<IDaskClusterRequest, IDaskCluster> =
      new SendingDialog({
        title: 'New Dask cluster',
        body: form,
        accept: 'Start',
        send: request => client.create(request),
        actions: error =>
          addPackagesButton(commands, error, args => {
            if (!adding) {
              adding = args;
              typed = form.typed();
              dialog.resolve(0); // closed as Cancel would: nothing is sent
            }
          })
      });
    dialog.addClass('jp-GpuEnv-daskDialog');
    const result = await dialog.launch();
    if (adding) {
      try {
        await commands.execute(EnvCommandIDs.editPackages, adding);
      } catch (reason) {
        notifyError('Could not add the packages', reason);
      }
      continue;
    }
    if (!result.button.accept || !dialog.result) {
      return null;
    }
    options.remember(form.lastUsed());
    return dialog.result;
  }
}

class ScaleForm extends DaskFormBody<IDaskScaleRequest> {
  constructor(cluster: IDaskCluster) {
    super();
    this._fields = new WorkerFields(workerTexts(cluster));
    this.node.append(this._fields.node, this.error);
  }

  getValue(): IDaskScaleRequest {
    return this._fields.value();
  }

  private _fields: WorkerFields;
}

/** "Scale…": a new number of workers, or adaptive bounds. */
export async function scaleCluster(
  client: DaskClient,
  cluster: IDaskCluster
): Promise<IDaskCluster | null> {
  const dialog = new SendingDialog<IDaskScaleRequest, IDaskCluster>({
    title: `Scale '${cluster.name}'`,
    body: new ScaleForm(cluster),
    accept: 'Scale',
    send: request => client.scale(cluster.id, request)
  });
  dialog.addClass('jp-GpuEnv-daskDialog');
  const result = await dialog.launch();
  return result.button.accept ? dialog.result : null;
}
