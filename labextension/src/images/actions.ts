/**
 * What the Images section's buttons do: open a notebook whose kernel runs
 * from the image, show and copy the usage lines, download, delete after a
 * confirmation.
 */
import {
  Clipboard,
  Dialog,
  Notification,
  showDialog
} from '@jupyterlab/apputils';
import { KernelSpec } from '@jupyterlab/services';
import { CommandRegistry } from '@lumino/commands';
import { Widget } from '@lumino/widgets';

import { downloadUrl } from '../components/download';
import { h } from '../components/form';
import { withKernelsShutDown } from '../components/kernels-in-use';
import { formatBytes } from '../components/format';
import { IImage } from '../api/types';
import { notifyError } from '../environments/notify';
import { ImagesModel } from './model';

const USAGES: [keyof IImage['usage'], string, string][] = [
  [
    'apptainer',
    'Apptainer',
    'Run the environment from inside any container (replace CONTAINER.sif).'
  ],
  [
    'squashfuse',
    'squashfuse',
    'Mount it as yourself in a folder you may make, then use its Python.'
  ],
  ['unmount', 'Unmount', 'Unmount it when done (fusermount3 or fusermount).'],
  ['unsquashfs', 'unsquashfs', 'Extract it where FUSE is not available.']
];

/** A dialog with the command lines to use `image`, each with Copy. */
export async function showUsage(image: IImage): Promise<void> {
  const body = h('div', {
    class: 'jp-GpuEnv-usageLines',
    'data-testid': 'gpu-env-image-usage'
  });
  for (const [key, label, hint] of USAGES) {
    const line = image.usage[key];
    const copy = h(
      'button',
      {
        type: 'button',
        class: 'jp-Button jp-mod-small',
        title: `Copy the ${label} command`,
        'data-usage': key
      },
      'Copy'
    );
    copy.addEventListener('click', () => {
      Clipboard.copyToSystem(line);
      copy.textContent = 'Copied';
    });
    body.append(
      h(
        'div',
        { class: 'jp-GpuEnv-usageLine', 'data-usage': key },
        h(
          'div',
          {},
          h(
            'span',
            {},
            h('span', { class: 'jp-GpuEnv-fieldLabel' }, label),
            h('span', { class: 'jp-GpuEnv-fieldHint' }, ` — ${hint}`)
          ),
          copy
        ),
        h('pre', { class: 'jp-GpuEnv-code' }, line)
      )
    );
  }
  body.append(
    h(
      'div',
      { class: 'jp-GpuEnv-fieldHint' },
      `Packed for ${image.usage.mount_path} (where Apptainer binds it and ` +
        'unsquashfs extracts it); squashfuse mounts it at ' +
        `${image.usage.squashfuse_mount}, a folder any user may make.`
    )
  );
  const result = await showDialog({
    title: `Use the image of '${image.environment}'`,
    body: new Widget({ node: body }),
    buttons: [
      Dialog.cancelButton({ label: 'Close' }),
      Dialog.okButton({ label: 'Copy all' })
    ]
  });
  if (result.button.accept) {
    Clipboard.copyToSystem(USAGES.map(([key]) => image.usage[key]).join('\n'));
    Notification.info('Copied the command lines.', { autoClose: 3000 });
  }
}

/**
 * Register the kernel that runs Python from `image` (mounted when it starts)
 * and open a new notebook with it, as its Launcher card would.
 */
export async function openNotebookFromImage(
  image: IImage,
  options: {
    model: ImagesModel;
    commands: CommandRegistry;
    kernelspecs?: KernelSpec.IManager | null;
  }
): Promise<void> {
  let kernel: string;
  try {
    const info = await options.model.client.registerKernel(image.id);
    kernel = info.kernel_name;
    // The notebook's kernel picker and the Launcher know it without reload.
    await options.kernelspecs?.refreshSpecs();
    Notification.info(
      `Registered '${info.display_name}': it is in the Launcher too.`,
      { autoClose: 5000 }
    );
  } catch (reason) {
    notifyError(
      `Could not register a kernel from the image of '${image.environment}'`,
      reason
    );
    return;
  }
  await options.commands.execute('notebook:create-new', { kernelName: kernel });
}

/** Download the image file through the browser. */
export function downloadImage(model: ImagesModel, image: IImage): void {
  const filename = image.path.split('/').pop() ?? image.id;
  downloadUrl(model.client.downloadUrl(image.id), filename);
}

/** Delete an image after a confirmation. */
export async function deleteImage(
  model: ImagesModel,
  image: IImage
): Promise<void> {
  const body = h(
    'div',
    { class: 'jp-GpuEnv-confirm' },
    h(
      'p',
      {},
      `This deletes ${image.path} (${formatBytes(image.size_bytes)}).`
    ),
    h(
      'p',
      {},
      'Its kernel is removed with it; jobs that use this image will fail ' +
        `to start. The environment '${image.environment}' is kept.`
    )
  );
  const result = await showDialog({
    title: `Delete the image of '${image.environment}'?`,
    body: new Widget({ node: body }),
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Delete' })]
  });
  if (!result.button.accept) {
    return;
  }
  try {
    const deleted = await withKernelsShutDown(
      `the image of '${image.environment}'`,
      shutdown => model.client.remove(image.id, shutdown)
    );
    if (deleted !== null) {
      Notification.success(`Deleted the image of '${image.environment}'.`, {
        autoClose: 4000
      });
    }
  } catch (reason) {
    notifyError('Could not delete the image', reason);
  }
  await model.refresh();
}
