/**
 * What an environment's "Packages…" and "History…" do: the packages dialog,
 * the plan reviewed before anything changes, undo from the history; each
 * change handed to the task tracker.
 */
import type { IEnvironment, IPackage } from '../../api/types';
import { TaskTracker } from '../../tasks/tracker';
import { EnvironmentsClient } from '../client';
import { notifyError } from '../notify';
import { IPackagesValue, PackagesForm } from './form';
import { reviewHistory } from './history';
import { confirmPlan } from './plan';
import { PlanningDialog } from './planning';

export class PackageActions {
  constructor(
    private readonly _client: EnvironmentsClient,
    private readonly _tracker: TaskTracker
  ) {}

  /**
   * Add or remove packages of one of the user's environments: the dialog
   * plans what was asked and stays open when that fails; the plan is shown
   * before anything changes, and backing out of it returns to the dialog
   * with what was typed (`typed`: what to start with). Settles once the
   * change has ended, or when the user backs out.
   */
  async edit(env: IEnvironment, typed?: IPackagesValue): Promise<void> {
    let packages: IPackage[];
    try {
      packages = (await this._client.get(env.name)).packages;
    } catch (reason) {
      notifyError(`Could not read the packages of '${env.name}'`, reason);
      return;
    }
    for (;;) {
      const dialog = new PlanningDialog<IPackagesValue>({
        title: `Packages of '${env.name}'`,
        body: new PackagesForm(
          packages,
          (query, kind) => this._client.search(query, kind),
          typed
        ),
        accept: 'Review…',
        serverSettings: this._client.serverSettings,
        plan: request =>
          this._client.changePackages(env.name, { ...request, dry_run: true }),
        check: request =>
          Object.values(request).every(list => list.length === 0)
            ? 'Nothing to change yet: type a package to add, or tick one to remove.'
            : null,
        nothing: `Nothing would change in '${env.name}': what you asked is already so.`,
        focusNodeSelector: 'input[type="text"]'
      });
      const result = await dialog.launch();
      const { plan, value: request } = dialog;
      if (!result.button.accept || !plan || !request) {
        return;
      }
      // The plan first, always: nothing changes until the user has seen it.
      if (await confirmPlan(plan, `Plan for '${env.name}'`, 'Apply')) {
        try {
          await this._tracker.ended(
            await this._client.changePackages(env.name, request)
          );
        } catch (reason) {
          notifyError(`Could not change '${env.name}'`, reason);
        }
        return;
      }
      typed = request;
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
