/**
 * What the Environments section's buttons and the palette commands do:
 * dialogs, API calls, tasks handed to the tracker, notifications.
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { KernelSpec, Session } from '@jupyterlab/services';

import { downloadText } from '../components/download';
import {
  confirmKernelspecRemoval,
  withKernelsShutDown
} from '../components/kernels-in-use';
import { TaskTracker } from '../tasks/tracker';
import type {
  ICreateRequest,
  IEnvironment,
  IPublishRequest
} from '../api/types';
import { confirmDelete, confirmUnpublish } from './dialogs/confirm';
import { ExportForm, PackForm } from './dialogs/export';
import { CloneForm, CreateFromFileForm, PublishForm } from './dialogs/naming';
import {
  describeImageSize,
  suggestCloneName,
  suggestFileEnvName
} from './format';
import { EnvironmentsClient, isTask } from './client';
import { EnvironmentsModel } from './model';
import { notifyError, notifyTaskEnd } from './notify';
import { IAskUntilStarted, askUntilStarted } from './start-task';
import { PackageActions } from './packages/actions';
import { confirmPlan } from './packages/plan';
import { PlanningDialog } from './packages/planning';

export class EnvironmentActions {
  constructor(options: EnvironmentActions.IOptions) {
    this.model = options.model;
    this.tracker = options.tracker;
    this._client = options.model.client;
    this._kernelspecs = options.kernelspecs ?? null;
    this._sessions = options.sessions ?? null;
    this._packages = new PackageActions(this._client, this.tracker);
    this.tracker.finished.connect((_, task) => {
      notifyTaskEnd(task);
      void this.model.refresh();
    });
  }

  readonly model: EnvironmentsModel;
  readonly tracker: TaskTracker;

  /** Clone `source` (or one chosen in the dialog) under a name asked. */
  async clone(source?: string): Promise<void> {
    const envs = await this._environments();
    if (envs.length === 0) {
      if (!this.model.environmentsError) {
        Notification.warning('There is no environment to clone yet.');
      }
      return;
    }
    const sources = source ? [source] : envs.map(e => e.name);
    let chosen =
      source ?? (envs.find(e => e.kind === 'managed') ?? envs[0]).name;
    let name = suggestCloneName(chosen, this.model.names);
    await this._askUntilStarted({
      ask: async error => {
        const result = await showDialog({
          title: source ? `Clone '${source}'` : 'Clone an environment',
          body: new CloneForm({
            sources,
            source: chosen,
            name,
            taken: this.model.names,
            error
          }),
          buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Clone' })],
          focusNodeSelector: 'input[type="text"]'
        });
        if (!result.button.accept || !result.value) {
          return null;
        }
        ({ source: chosen, name } = result.value);
        return result.value;
      },
      start: value => this._client.clone(value.source, value.name),
      failure: value => `Could not clone '${value.source}'`
    });
  }

  /**
   * Make a new environment from `file` (a path under the server's root, as
   * the file browser shows it): ask its name, show what it would install,
   * and start it. Answers whether it started (its task is tracked).
   */
  async createFromFile(file: string): Promise<boolean> {
    // Fresh names for the suggestion and the check, even with the panel closed.
    await this.model.load();
    let name = suggestFileEnvName(file, this.model.names);
    return this._askUntilStarted({
      ask: async error => {
        for (;;) {
          // The dialog plans what the file would install, and stays open
          // with the server's words when the file or its plan fails.
          const dialog = new PlanningDialog<string>({
            title: 'Create an environment from a file',
            body: new CreateFromFileForm({
              file,
              name,
              taken: this.model.names,
              error
            }),
            accept: 'Review…',
            serverSettings: this._client.serverSettings,
            plan: chosen =>
              this._client.create({
                name: chosen,
                from_file: file,
                dry_run: true
              }),
            nothing: `${file} names no package to install.`,
            focusNodeSelector: 'input[type="text"]'
          });
          const result = await dialog.launch();
          if (!result.button.accept || !dialog.plan || !dialog.value) {
            return null;
          }
          name = dialog.value;
          // The plan first, always: nothing is made until the user has seen it.
          if (
            await confirmPlan(
              dialog.plan,
              `Create '${name}' from ${file}`,
              'Create'
            )
          ) {
            return { name, from_file: file } as ICreateRequest;
          }
          error = undefined;
        }
      },
      start: request => this._client.create(request),
      failure: request => `Could not create '${request.name}' from ${file}`,
      // A name taken meanwhile: ask another one; any other refusal says why.
      retryable: err => err.status === 409 && err.reason === 'env_exists'
    });
  }

  /**
   * Share one of the user's environments with the team: a copy in the
   * shared folder, with a one-line description, read-only for the others.
   */
  async publish(env: IEnvironment): Promise<void> {
    let value: IPublishRequest | undefined;
    await this._askUntilStarted({
      ask: async error => {
        const result = await showDialog({
          title: `Share '${env.name}' with the team`,
          body: new PublishForm({
            name: env.name,
            taken: sharedFolderNames(this.model.environments ?? []),
            description: value?.description,
            sharedName: value?.name ?? undefined,
            error
          }),
          buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Share' })],
          focusNodeSelector: 'input[type="text"]'
        });
        value = (result.button.accept && result.value) || undefined;
        return value ?? null;
      },
      start: request => this._client.publish(env.name, request),
      failure: () => `Could not share '${env.name}'`
    });
  }

  /** Remove a shared environment the user published, after a confirmation. */
  async unpublish(env: IEnvironment): Promise<void> {
    if (!(await confirmUnpublish(env))) {
      return;
    }
    try {
      await this._client.unpublish(env.name);
      Notification.success(`Unpublished '${env.name}'.`, { autoClose: 4000 });
    } catch (reason) {
      notifyError(`Could not unpublish '${env.name}'`, reason);
    }
    await this.model.refresh();
  }

  /** Pack an environment (asked when not given) into an image. */
  async pack(environment?: string): Promise<void> {
    const names = environment
      ? [environment]
      : (await this._environments()).map(e => e.name);
    if (names.length === 0) {
      if (!this.model.environmentsError) {
        Notification.warning('There is no environment to pack yet.');
      }
      return;
    }
    const result = await showDialog({
      title: environment
        ? `Pack '${environment}' into an image`
        : 'Pack an environment',
      body: new PackForm({ environments: names, environment: names[0] }),
      buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Pack' })]
    });
    if (!result.button.accept || !result.value) {
      return;
    }
    const { environment: name, format, compression } = result.value;
    try {
      const answer = await this._client.pack(name, {
        format,
        compression
      });
      if (isTask(answer)) {
        this.tracker.track(answer);
      } else {
        Notification.success(
          `An identical image of '${name}' exists already: ` +
            `${describeImageSize(answer)}.`,
          { autoClose: 5000 }
        );
        await this.model.refresh();
      }
    } catch (reason) {
      notifyError(`Could not pack '${name}'`, reason);
    }
  }

  /** Register the environment's kernel, or remove it when registered. */
  async toggleKernel(env: IEnvironment): Promise<void> {
    const registered = env.kernel_name !== null;
    if (
      env.kernel_name &&
      !(await confirmKernelspecRemoval(
        env.kernel_name,
        await this._kernelLabel(env.kernel_name),
        this._sessions
      ))
    ) {
      return;
    }
    try {
      if (registered) {
        await this._client.unregisterKernel(env.name);
        Notification.info(`Removed the kernel of '${env.name}'.`, {
          autoClose: 4000
        });
      } else {
        const info = await this._client.registerKernel(env.name);
        Notification.success(
          `Registered '${info.display_name}': it is in the Launcher.`,
          { autoClose: 5000 }
        );
      }
      // The Launcher shows the new kernel without a page reload.
      await this._kernelspecs?.refreshSpecs();
    } catch (reason) {
      notifyError(
        registered
          ? `Could not remove the kernel of '${env.name}'`
          : `Could not register '${env.name}' as a kernel`,
        reason
      );
    }
    await this.model.refresh();
  }

  /**
   * Add or remove packages of one of the user's environments, `add` conda
   * and `pip` PyPI specs filled in (a Dask cluster's); settles when done.
   */
  editPackages(env: IEnvironment, add: string[], pip: string[]): Promise<void> {
    const typed = { add, remove: [], pip_add: pip, pip_remove: [] };
    return this._packages.edit(
      env,
      add.length + pip.length ? typed : undefined
    );
  }

  /** Show an environment's history, with undo (or redo) when a state is kept. */
  history(env: IEnvironment): Promise<void> {
    return this._packages.history(env);
  }

  /** Download environment.yml or the explicit lock of an environment. */
  async exportEnvironment(env: IEnvironment): Promise<void> {
    const result = await showDialog({
      title: `Export '${env.name}'`,
      body: new ExportForm(),
      buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Download' })]
    });
    if (!result.button.accept || !result.value) {
      return;
    }
    try {
      const file = await this._client.export(env.name, result.value);
      downloadText(file.filename, file.content);
    } catch (reason) {
      notifyError(`Could not export '${env.name}'`, reason);
    }
  }

  /** Delete one of the user's environments, after a confirmation. */
  async remove(env: IEnvironment): Promise<void> {
    const kernel = env.kernel_name
      ? await this._kernelLabel(env.kernel_name)
      : null;
    if (!(await confirmDelete(env, kernel))) {
      return;
    }
    try {
      const deleted = await withKernelsShutDown(`'${env.name}'`, shutdown =>
        this._client.remove(env.name, shutdown)
      );
      if (deleted === null) {
        return;
      }
      Notification.success(
        `Deleted '${env.name}'` +
          (deleted.kernel_removed ? ' and its kernel.' : '.'),
        { autoClose: 4000 }
      );
      if (deleted.kernel_removed) {
        await this._kernelspecs?.refreshSpecs();
      }
    } catch (reason) {
      notifyError(`Could not delete '${env.name}'`, reason);
    }
    await this.model.refresh();
  }

  /** Cancel a running task (the tracker reports how it ended). */
  async cancel(taskId: string): Promise<void> {
    try {
      await this.tracker.cancel(taskId);
    } catch (reason) {
      notifyError('Could not cancel the task', reason);
    }
  }

  /** Ask until the server starts the task (or the user backs out). */
  private _askUntilStarted<T>(
    steps: Omit<IAskUntilStarted<T>, 'tracker' | 'model'>
  ): Promise<boolean> {
    return askUntilStarted({
      ...steps,
      tracker: this.tracker,
      model: this.model
    });
  }

  private async _environments(): Promise<IEnvironment[]> {
    // Fresh names for the choice and the checks, even with the panel closed.
    await this.model.load();
    const error = this.model.environmentsError;
    if (error) {
      notifyError('Could not list the environments', error);
    }
    return error ? [] : (this.model.environments ?? []);
  }

  /** The kernel's name as the Launcher shows it. */
  private async _kernelLabel(kernelName: string): Promise<string> {
    const manager = this._kernelspecs;
    if (manager && !manager.specs?.kernelspecs[kernelName]) {
      // Registered since the page loaded (another tab, a terminal).
      await manager.refreshSpecs().catch(() => undefined);
    }
    const spec = manager?.specs?.kernelspecs[kernelName];
    return spec?.display_name ?? kernelName;
  }

  private _client: EnvironmentsClient;
  private _packages: PackageActions;
  private _kernelspecs: KernelSpec.IManager | null;
  private _sessions: Session.IManager | null;
}

/** The folder names in the shared folder (a listed name may carry `@…`). */
function sharedFolderNames(envs: IEnvironment[]): string[] {
  return envs
    .filter(env => env.kind === 'shared')
    .map(env => env.prefix.split('/').filter(Boolean).pop() ?? env.name);
}

export namespace EnvironmentActions {
  export interface IOptions {
    model: EnvironmentsModel;
    tracker: TaskTracker;
    /** Refreshed after kernel changes, so the Launcher follows at once. */
    kernelspecs?: KernelSpec.IManager | null;
    /** The notebooks' sessions: which kernels run, for confirmations. */
    sessions?: Session.IManager | null;
  }
}
