/**
 * What the Dask section's buttons and commands do: start a cluster, scale
 * it, open its dashboard in a tab, insert a connected Client into the
 * notebook, shut it down after a confirmation. Each refreshes the list with
 * the cluster the server answered.
 */
import {
  Dialog,
  InputDialog,
  MainAreaWidget,
  Notification,
  showDialog
} from '@jupyterlab/apputils';
import { JupyterFrontEnd } from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IFrame } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import type { IDaskCluster } from '../api/types';
import { h } from '../components/form';
import { notifyError } from '../environments/notify';
import { ILastUsed } from '../jobs/submit/resource-fields';
import { createDashboard, dashboardId } from './dashboard';
import { newCluster, scaleCluster } from './dialog';
import { dashboardUrl, describeWorkers, isLive } from './format';
import { DaskModel } from './model';

export interface IDaskActionsOptions {
  app: JupyterFrontEnd;
  model: DaskModel;
  notebooks: INotebookTracker | null;
  last: () => Promise<ILastUsed | null>;
  remember: (last: ILastUsed) => void;
  /** Show the Dask section (a new cluster shows there). */
  reveal: () => void;
}

export class DaskActions {
  constructor(private readonly _options: IDaskActionsOptions) {}

  get model(): DaskModel {
    return this._options.model;
  }

  /** The notebook a client goes into: the last one active. */
  get notebook(): INotebookTracker['currentWidget'] {
    return this._options.notebooks?.currentWidget ?? null;
  }

  /** "New cluster…", the environment from the notebook's kernel. */
  async create(): Promise<void> {
    const { app, model } = this._options;
    const notebook = this.notebook;
    const kernel =
      notebook?.sessionContext.session?.kernel?.name ??
      notebook?.sessionContext.kernelPreference.name ??
      null;
    const cluster = await newCluster({
      client: model.client,
      commands: app.commands,
      kernelspecs: app.serviceManager.kernelspecs,
      kernel,
      last: this._options.last,
      remember: this._options.remember
    });
    if (cluster) {
      model.update(cluster);
      this._options.reveal();
    }
  }

  async scale(cluster: IDaskCluster): Promise<void> {
    const scaled = await scaleCluster(this.model.client, cluster);
    if (scaled) {
      this.model.update(scaled);
    }
  }

  /** The dashboard in a main-area tab (the one already open, if any). */
  openDashboard(cluster: IDaskCluster): void {
    const { app } = this._options;
    if (!cluster.dashboard) {
      Notification.warning(
        `The dashboard of '${cluster.name}' is not there yet: its scheduler is starting.`,
        { autoClose: 5000 }
      );
      return;
    }
    const id = dashboardId(cluster.id);
    const open = Array.from(app.shell.widgets('main')).find(w => w.id === id);
    if (open) {
      app.shell.activateById(id);
      return;
    }
    const url = dashboardUrl(
      app.serviceManager.serverSettings.baseUrl,
      cluster.dashboard
    );
    const widget: MainAreaWidget<IFrame> = createDashboard(cluster, url);
    app.shell.add(widget, 'main');
    app.shell.activateById(widget.id);
  }

  /** The dashboard in a browser tab of its own. */
  openDashboardInBrowser(cluster: IDaskCluster): void {
    if (cluster.dashboard) {
      const { baseUrl } = this._options.app.serviceManager.serverSettings;
      window.open(
        dashboardUrl(baseUrl, cluster.dashboard),
        '_blank',
        'noopener'
      );
    }
  }

  /**
   * A code cell connecting a Client, at the top of the notebook: the code
   * the server gives (`connect(id)`, or the cluster's certificate files when
   * the cluster's environment lacks this package), since the cluster refuses
   * any client without its certificate.
   */
  async insertClient(cluster: IDaskCluster): Promise<void> {
    const panel = this.notebook;
    if (!panel) {
      Notification.warning(
        'Open a notebook first: the client is inserted into it.',
        { autoClose: 5000 }
      );
      return;
    }
    const source = cluster.client_code;
    if (!source) {
      Notification.warning(
        `'${cluster.name}' has no scheduler address yet: wait until it runs.`,
        { autoClose: 5000 }
      );
      return;
    }
    await panel.context.ready;
    const notebook = panel.content;
    notebook.model?.sharedModel.insertCell(0, {
      cell_type: 'code',
      source
    });
    notebook.activeCellIndex = 0;
    notebook.deselectAll();
    this._options.app.shell.activateById(panel.id);
    void notebook.activeCell?.ready.then(() =>
      notebook.scrollToItem(0, 'start')
    );
  }

  /** Shut the cluster down after a confirmation. */
  async shutdown(cluster: IDaskCluster): Promise<void> {
    const body = h(
      'div',
      { class: 'jp-GpuEnv-confirm' },
      h(
        'p',
        {},
        `This stops the scheduler and its workers (${describeWorkers(
          cluster.workers,
          cluster.adapt
        )}), pending ones included.`
      ),
      h(
        'p',
        {},
        'Clients connected to it lose their data and running computations; ' +
          'its dashboard tab closes.'
      )
    );
    const result = await showDialog({
      title: `Shut down '${cluster.name}'?`,
      body: new Widget({ node: body }),
      buttons: [
        Dialog.cancelButton(),
        Dialog.warnButton({ label: 'Shut down' })
      ]
    });
    if (!result.button.accept) {
      return;
    }
    try {
      this.model.update(await this.model.client.stop(cluster.id));
      // Its dashboard goes with it: close its tab.
      const id = dashboardId(cluster.id);
      const { shell } = this._options.app;
      Array.from(shell.widgets('main'))
        .find(widget => widget.id === id)
        ?.close();
    } catch (reason) {
      notifyError(`Could not shut down '${cluster.name}'`, reason);
    }
  }

  /**
   * The cluster a palette command acts on: the only live one, or the one
   * chosen; undefined when there is none or the user cancels.
   */
  async choose(
    title: string,
    fits: (cluster: IDaskCluster) => boolean = isLive
  ): Promise<IDaskCluster | undefined> {
    await this.model.load(); // fresh, even with the sidebar closed
    if (this.model.error) {
      notifyError('Could not list the Dask clusters', this.model.error);
      return undefined;
    }
    const clusters = (this.model.clusters ?? []).filter(fits);
    if (clusters.length === 0) {
      Notification.warning(
        'No Dask cluster runs: start one with “Dask: new cluster…”.',
        { autoClose: 5000 }
      );
      return undefined;
    }
    if (clusters.length === 1) {
      return clusters[0];
    }
    const labels = clusters.map(
      c =>
        `${c.name} (${c.backend}, ${describeWorkers(c.workers, c.adapt)}, ${c.id})`
    );
    const result = await InputDialog.getItem({
      title,
      label: 'Cluster',
      items: labels,
      current: 0,
      okLabel: 'Next'
    });
    return result.button.accept && result.value
      ? clusters[labels.indexOf(result.value)]
      : undefined;
  }
}
