/**
 * What an environment's "Packages…" and "History…" do: the packages dialog,
 * the plan reviewed before anything changes, undo from the history; each
 * change handed to the task tracker.
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';

import type { IEnvironment } from '../../api/types';
import { TaskTracker } from '../../tasks/tracker';
import { EnvironmentsClient } from '../client';
import { notifyError } from '../notify';
import { PackagesForm } from './form';
import { reviewHistory } from './history';
import { reviewPlan } from './plan';

export class PackageActions {
  constructor(
    private readonly _client: EnvironmentsClient,
    private readonly _tracker: TaskTracker
  ) {}

  /** Add or remove packages of one of the user's environments. */
  async edit(env: IEnvironment): Promise<void> {
    let body: PackagesForm;
    try {
      body = new PackagesForm(
        (await this._client.get(env.name)).packages,
        (query, kind) => this._client.search(query, kind)
      );
    } catch (reason) {
      notifyError(`Could not read the packages of '${env.name}'`, reason);
      return;
    }
    const result = await showDialog({
      title: `Packages of '${env.name}'`,
      body,
      buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Review…' })],
      focusNodeSelector: 'input[type="text"]'
    });
    if (!result.button.accept || !result.value) {
      return;
    }
    const request = result.value;
    if (Object.values(request).every(list => list.length === 0)) {
      Notification.info('Nothing to change.', { autoClose: 3000 });
      return;
    }
    // The plan first, always: nothing changes until the user has seen it.
    if ((await reviewPlan(this._client, env.name, request)) !== true) {
      return;
    }
    try {
      this._tracker.track(await this._client.changePackages(env.name, request));
    } catch (reason) {
      notifyError(`Could not change '${env.name}'`, reason);
    }
  }

  /** Show an environment's history, with undo (or redo) when a state is kept. */
  async history(env: IEnvironment): Promise<void> {
    try {
      if (!(await reviewHistory(await this._client.history(env.name)))) {
        return;
      }
      this._tracker.track(await this._client.undo(env.name));
    } catch (reason) {
      notifyError(`Could not undo the last change of '${env.name}'`, reason);
    }
  }
}
