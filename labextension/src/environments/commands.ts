/**
 * The Environments section's actions as commands. Each row's "⋯" menu calls
 * them with its environment (`{ environment: name }`; clone's is `source`);
 * those that can ask which environment — clone, pack, check GPU — are in the
 * command palette too. Whether an item is shown or enabled is decided here,
 * from the listed environment and the tasks running on it.
 *
 * "Create environment from this file" is in the file browser's context menu
 * (schema/plugin.json) on environment.yml, requirements.txt and lock files,
 * and in the palette, where it asks for the file.
 */
import {
  ICommandPalette,
  InputDialog,
  Notification
} from '@jupyterlab/apputils';
import type { IFileBrowserFactory } from '@jupyterlab/filebrowser';
import { CommandRegistry } from '@lumino/commands';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import type { IEnvironment } from '../api/types';
import { MenuEntry, SEPARATOR, rowMenu } from '../components/menu-button';
import type { GpuClient } from '../gpu/client';
import { EnvironmentActions } from './actions';
import { isEnvironmentFile } from './format';
import {
  SHARING_OPTION,
  chooseEnvironment,
  explainSharingOff
} from './dialogs/pick';
import { notifyError } from './notify';
import { isFinal } from '../tasks/tracker';

export namespace EnvCommandIDs {
  export const clone = 'jupyter-gpu-env:clone-environment';
  export const pack = 'jupyter-gpu-env:pack-environment';
  export const checkGpu = 'jupyter-gpu-env:check-gpu';
  export const editPackages = 'jupyter-gpu-env:edit-packages';
  export const history = 'jupyter-gpu-env:environment-history';
  export const toggleKernel = 'jupyter-gpu-env:toggle-kernel';
  export const exportEnv = 'jupyter-gpu-env:export-environment';
  export const remove = 'jupyter-gpu-env:delete-environment';
  export const createFromFile = 'jupyter-gpu-env:create-from-file';
  export const publish = 'jupyter-gpu-env:publish-environment';
  export const unpublish = 'jupyter-gpu-env:unpublish-environment';
  /**
   * "Kernel on the batch system…", registered by batch-kernels/ (which
   * imports this folder); a menu leaves it out where it is not registered.
   */
  export const batchKernel = 'jupyter-gpu-env:new-batch-kernel';
}

/** The "⋯" menu of an environment's row, in the order it shows. */
export function environmentMenu(name: string): MenuEntry[] {
  return rowMenu({ environment: name }, [
    EnvCommandIDs.checkGpu,
    EnvCommandIDs.toggleKernel,
    EnvCommandIDs.batchKernel,
    EnvCommandIDs.editPackages,
    EnvCommandIDs.history,
    { command: EnvCommandIDs.clone, args: { source: name } },
    EnvCommandIDs.exportEnv,
    EnvCommandIDs.pack,
    EnvCommandIDs.publish,
    SEPARATOR,
    EnvCommandIDs.remove
  ]);
}

/** The "⋯" menu of a shared environment's row: read-only, cloned to use. */
export function sharedEnvironmentMenu(name: string): MenuEntry[] {
  return [
    { command: EnvCommandIDs.clone, args: { source: name } },
    { command: EnvCommandIDs.unpublish, args: { environment: name } }
  ];
}

export function registerEnvironmentCommands(options: {
  commands: CommandRegistry;
  actions: EnvironmentActions;
  gpu: GpuClient;
  palette: ICommandPalette | null;
  category: string;
  /** The file browsers, whose selected file "create from file" uses. */
  files?: IFileBrowserFactory | null;
  /** Show the Environments section (a new environment's task runs there). */
  reveal?: () => void;
}): void {
  const { commands, actions, gpu } = options;
  const named = (args: ReadonlyPartialJSONObject, key = 'environment') =>
    text(args, key);
  const envOf = (args: ReadonlyPartialJSONObject): IEnvironment | undefined =>
    actions.model.environments?.find(e => e.name === named(args));
  /** Whether a task on `target` runs (a change, a pack, a check). */
  const running = (target: string): boolean =>
    actions.tracker.tasks.some(t => !isFinal(t) && t.target === target);
  const changing = (args: ReadonlyPartialJSONObject): boolean =>
    running(`environments/${named(args)}`);
  const own = (args: ReadonlyPartialJSONObject): boolean =>
    envOf(args)?.kind === 'own';
  /** The one environment file selected in the current file browser. */
  const selectedFile = (): string | null => {
    const browser = options.files?.tracker.currentWidget;
    if (!browser) {
      return null;
    }
    const items = Array.from(browser.selectedItems());
    const [item] = items;
    return items.length === 1 &&
      item.type !== 'directory' &&
      isEnvironmentFile(item.path)
      ? item.path
      : null;
  };
  /** From the palette (no environment given): whether the command asks which. */
  const palette = (args: ReadonlyPartialJSONObject): boolean =>
    !!args['isPalette'] && !named(args);
  /**
   * Run `action` on the listed environment the command was called with; from
   * the palette, on the one chosen in a picker (`ask`: its title, and whether
   * only the user's own environments are offered).
   */
  const onEnv =
    (
      action: (
        env: IEnvironment,
        args: ReadonlyPartialJSONObject
      ) => Promise<void>,
      ask: { title: string; ok: string; own?: boolean } = {
        title: 'Which environment?',
        ok: 'Next'
      }
    ) =>
    async (args: ReadonlyPartialJSONObject): Promise<void> => {
      if (palette(args)) {
        const chosen = await chooseEnvironment(actions, ask.title, {
          okLabel: ask.ok,
          own: ask.own
        });
        const env = actions.model.environments?.find(e => e.name === chosen);
        if (env) {
          await action(env, args);
        }
        return;
      }
      const env = envOf(args);
      if (env) {
        await action(env, args);
      } else {
        Notification.warning(
          `No environment named '${named(args)}' is listed.`
        );
      }
    };

  commands.addCommand(EnvCommandIDs.clone, {
    label: args => (named(args, 'source') ? 'Clone…' : 'Clone environment…'),
    caption: args =>
      named(args, 'source')
        ? `Clone '${named(args, 'source')}' into your own environments`
        : 'Clone a conda environment into your own environments',
    execute: args => actions.clone(named(args, 'source'))
  });
  commands.addCommand(EnvCommandIDs.pack, {
    label: args =>
      named(args) ? 'Pack into an image…' : 'Pack environment into an image…',
    caption:
      'Pack a conda environment into one squashfs image (for Apptainer and batch jobs)',
    isEnabled: args => !named(args) || !running(`images/${named(args)}`),
    execute: args => actions.pack(named(args))
  });
  commands.addCommand(EnvCommandIDs.checkGpu, {
    label: args =>
      named(args) ? 'Check GPU' : 'Check whether an environment sees the GPU…',
    caption:
      "Run the environment's own Python: the CUDA driver, the devices, " +
      'and a computation with torch or cupy where installed',
    isEnabled: args =>
      !named(args) || !running(`environments/${named(args)}/gpu`),
    execute: async args => {
      const name =
        named(args) ??
        (await chooseEnvironment(actions, 'Check whether it sees the GPU', {
          okLabel: 'Check'
        }));
      if (!name) {
        return;
      }
      try {
        actions.tracker.track(await gpu.checkEnvironment(name));
      } catch (reason) {
        notifyError(`Could not check '${name}'`, reason);
      }
    }
  });
  /** A command on one of the user's environments, off while it changes. */
  const addOwnCommand = (
    id: string,
    label: string,
    caption: string,
    action: (
      env: IEnvironment,
      args: ReadonlyPartialJSONObject
    ) => Promise<void>,
    inPalette?: { label: string; ok: string }
  ): void => {
    commands.addCommand(id, {
      label: args => (inPalette && palette(args) ? inPalette.label : label),
      caption,
      isVisible: args =>
        (inPalette !== undefined && palette(args)) || own(args),
      isEnabled: args => !changing(args),
      execute: onEnv(action, {
        title: inPalette?.label.replace(/…$/, '') ?? label,
        ok: inPalette?.ok ?? 'Next',
        own: true
      })
    });
  };
  addOwnCommand(
    EnvCommandIDs.editPackages,
    'Add or remove packages…',
    'Add or remove conda and PyPI packages, after seeing the plan',
    // `add`, `pip_add`: conda and PyPI specs filled in (a Dask cluster's
    // missing packages); settles once the change has ended.
    (env, args) =>
      actions.editPackages(env, texts(args, 'add'), texts(args, 'pip_add')),
    { label: 'Add or remove packages in an environment…', ok: 'Next' }
  );
  addOwnCommand(
    EnvCommandIDs.history,
    'History and undo…',
    'The changes this environment holds; undo the last one',
    env => actions.history(env),
    { label: 'Undo a change to an environment (its history)…', ok: 'Next' }
  );
  commands.addCommand(EnvCommandIDs.toggleKernel, {
    label: args =>
      palette(args)
        ? 'Register an environment as a kernel (or remove its kernel)…'
        : envOf(args)?.kernel_name
          ? 'Remove the kernel'
          : 'Register as a kernel',
    caption: args =>
      envOf(args)?.kernel_name
        ? `Remove the kernel '${envOf(args)?.kernel_name}'`
        : 'Register as a Jupyter kernel (shows in the Launcher)',
    isEnabled: args => {
      const env = envOf(args);
      return (
        palette(args) ||
        (!!env && !changing(args) && (!!env.kernel_name || env.has_ipykernel))
      );
    },
    execute: onEnv(env => actions.toggleKernel(env), {
      title: 'Register or remove the kernel of an environment',
      ok: 'Next'
    })
  });
  commands.addCommand(EnvCommandIDs.exportEnv, {
    label: args => (palette(args) ? 'Export an environment…' : 'Export…'),
    caption: 'Download an environment.yml or an explicit lock',
    execute: onEnv(env => actions.exportEnvironment(env), {
      title: 'Export an environment',
      ok: 'Next'
    })
  });
  addOwnCommand(
    EnvCommandIDs.remove,
    'Delete…',
    'Delete this environment and its kernel',
    env => actions.remove(env)
  );

  commands.addCommand(EnvCommandIDs.createFromFile, {
    label: args =>
      args['isPalette']
        ? 'Create environment from a file…'
        : 'Create environment from this file…',
    caption:
      'A new environment of yours from an environment.yml, a ' +
      'requirements.txt or an explicit lock, after seeing what it installs',
    // In the file browser's menu on one such file; in the palette, always.
    isVisible: args => !!args['isPalette'] || selectedFile() !== null,
    execute: async args => {
      let file = text(args, 'path') ?? selectedFile();
      if (!file) {
        const answer = await InputDialog.getText({
          title: 'Create an environment from a file',
          label:
            'File under the server’s root (environment.yml, ' +
            'requirements.txt or an explicit lock)',
          placeholder: 'project/environment.yml',
          okLabel: 'Next'
        });
        file = answer.button.accept ? answer.value?.trim() || null : null;
      }
      if (file && (await actions.createFromFile(file))) {
        options.reveal?.();
      }
    }
  });
  commands.addCommand(EnvCommandIDs.publish, {
    label: () =>
      actions.model.sharing
        ? 'Share with team…'
        : 'Share with team: off on this server…',
    caption: () =>
      actions.model.sharing
        ? 'Publish a read-only copy in the shared folder, with a description; ' +
          'teammates clone it to use it'
        : `Sharing is off on this server: an administrator turns it on with ${SHARING_OPTION}`,
    isVisible: args => own(args),
    isEnabled: args => !actions.model.sharing || !changing(args),
    execute: onEnv(env =>
      actions.model.sharing ? actions.publish(env) : explainSharingOff()
    )
  });
  commands.addCommand(EnvCommandIDs.unpublish, {
    label: 'Unpublish…',
    caption: 'Remove this environment from the shared folder',
    isVisible: args => envOf(args)?.can_unpublish === true,
    execute: onEnv(env => actions.unpublish(env))
  });

  for (const command of [
    EnvCommandIDs.createFromFile,
    EnvCommandIDs.clone,
    EnvCommandIDs.pack,
    EnvCommandIDs.checkGpu
  ]) {
    options.palette?.addItem({ command, category: options.category });
  }
  // Asking which environment in a picker (their rows' menus give it).
  for (const command of [
    EnvCommandIDs.editPackages,
    EnvCommandIDs.history,
    EnvCommandIDs.exportEnv,
    EnvCommandIDs.toggleKernel
  ]) {
    options.palette?.addItem({
      command,
      category: options.category,
      args: { isPalette: true }
    });
  }
}

/** A command's list of strings argument (a string: a list of one). */
export function texts(args: ReadonlyPartialJSONObject, key: string): string[] {
  const value = args[key];
  const list = Array.isArray(value) ? value : [value];
  return list.filter((item): item is string => typeof item === 'string');
}

/** A command's string argument, if given. */
export function text(
  args: ReadonlyPartialJSONObject,
  key: string
): string | undefined {
  const value = args[key];
  return typeof value === 'string' ? value : undefined;
}
