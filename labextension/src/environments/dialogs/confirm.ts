/**
 * The confirmations before an environment is deleted or unpublished: what
 * goes, and what stays.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import type { IEnvironment } from '../../api/types';
import { h } from '../../components/form';
import { formatEnvSize, plural } from '../format';

/** Whether the user confirms unpublishing the shared copy `env`. */
export async function confirmUnpublish(env: IEnvironment): Promise<boolean> {
  const body = h(
    'div',
    { class: 'jp-GpuEnv-confirm' },
    h(
      'p',
      {},
      `This deletes the shared copy ${env.prefix}: teammates no longer ` +
        'see it in their Shared list.'
    ),
    h(
      'p',
      {},
      'Clones made of it stay, and so does your own environment. ' +
        'Kernels registered from the shared copy stop working.'
    )
  );
  const result = await showDialog({
    title: `Unpublish '${env.name}'?`,
    body: new Widget({ node: body }),
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Unpublish' })]
  });
  return result.button.accept;
}

/**
 * Whether the user confirms deleting `env`, whose kernel (`kernel`, as the
 * Launcher names it) goes with it.
 */
export async function confirmDelete(
  env: IEnvironment,
  kernel: string | null
): Promise<boolean> {
  const body = h(
    'div',
    { class: 'jp-GpuEnv-confirm' },
    h(
      'p',
      {},
      `This deletes ${env.prefix} — ${plural(env.package_count, 'package')}, ` +
        `${formatEnvSize(env)}.`
    ),
    kernel
      ? h(
          'p',
          {},
          `Its kernel '${kernel}' is removed too: notebooks using it will ` +
            'ask for another kernel.'
        )
      : null,
    h('p', {}, 'Images packed from it are kept. This cannot be undone.')
  );
  const result = await showDialog({
    title: `Delete '${env.name}'?`,
    body: new Widget({ node: body }),
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Delete' })]
  });
  return result.button.accept;
}
