/**
 * The Images section's actions as commands, called with `{ image: id }` by
 * each row's button and "⋯" menu; "New notebook from an image…" is in the
 * command palette too, and asks which image.
 */
import {
  ICommandPalette,
  InputDialog,
  Notification
} from '@jupyterlab/apputils';
import { KernelSpec } from '@jupyterlab/services';
import { CommandRegistry } from '@lumino/commands';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import type { IImage } from '../api/types';
import { MenuEntry, SEPARATOR, rowMenu } from '../components/menu-button';
import { text } from '../environments/commands';
import { describeImageFormat } from '../environments/format';
import { ImagesModel } from './model';
import { notifyError } from '../environments/notify';
import {
  deleteImage,
  downloadImage,
  openNotebookFromImage,
  showUsage
} from './actions';

export namespace ImageCommandIDs {
  export const notebook = 'jupyter-gpu-env:image-notebook';
  export const usage = 'jupyter-gpu-env:image-usage';
  export const download = 'jupyter-gpu-env:image-download';
  export const remove = 'jupyter-gpu-env:image-delete';
}

/** The "⋯" menu of an image's row. */
export function imageMenu(id: string): MenuEntry[] {
  return rowMenu({ image: id }, [
    ImageCommandIDs.notebook,
    ImageCommandIDs.usage,
    ImageCommandIDs.download,
    SEPARATOR,
    ImageCommandIDs.remove
  ]);
}

export function registerImageCommands(options: {
  commands: CommandRegistry;
  model: ImagesModel;
  kernelspecs?: KernelSpec.IManager | null;
  palette: ICommandPalette | null;
  category: string;
}): void {
  const { commands, model } = options;
  const imageOf = (args: ReadonlyPartialJSONObject): IImage | undefined =>
    model.find(text(args, 'image') ?? '');
  /** Run `action` on the listed image the command was called with. */
  const onImage =
    (action: (image: IImage) => Promise<void> | void) =>
    async (args: ReadonlyPartialJSONObject): Promise<void> => {
      const image = imageOf(args);
      if (image) {
        await action(image);
      } else {
        Notification.warning(`No image '${text(args, 'image')}' is listed.`);
      }
    };

  commands.addCommand(ImageCommandIDs.notebook, {
    label: args =>
      text(args, 'image')
        ? 'New notebook from this image'
        : 'New notebook from an image…',
    caption:
      'Register a kernel that runs from the mounted image (it shows in the ' +
      'Launcher) and open a new notebook with it',
    execute: async args => {
      const image = text(args, 'image')
        ? imageOf(args)
        : await chooseImage(model);
      if (image) {
        await openNotebookFromImage(image, {
          model,
          commands,
          kernelspecs: options.kernelspecs
        });
      }
    }
  });
  commands.addCommand(ImageCommandIDs.usage, {
    label: 'Show how to use it…',
    caption:
      'The apptainer, squashfuse (with its unmount) and unsquashfs command lines, to copy',
    execute: onImage(image => showUsage(image))
  });
  commands.addCommand(ImageCommandIDs.download, {
    label: 'Download',
    caption: 'Download the image file',
    execute: onImage(image => downloadImage(model, image))
  });
  commands.addCommand(ImageCommandIDs.remove, {
    label: 'Delete…',
    caption: 'Delete this image and its kernel',
    execute: onImage(image => deleteImage(model, image))
  });
  options.palette?.addItem({
    command: ImageCommandIDs.notebook,
    category: options.category
  });
}

/** Ask which packed image; undefined when there is none or the user cancels. */
async function chooseImage(model: ImagesModel): Promise<IImage | undefined> {
  await model.load(); // fresh, even with the panel closed
  if (model.error) {
    notifyError('Could not list the images', model.error);
    return undefined;
  }
  const images = model.images ?? [];
  if (images.length === 0) {
    Notification.warning(
      'There is no image yet: pack an environment first (“Pack into an image…” in its menu).'
    );
    return undefined;
  }
  // Several images of one environment differ by their format and id.
  const labels = images.map(
    i => `${i.environment} (${describeImageFormat(i)}, ${i.id})`
  );
  const result = await InputDialog.getItem({
    title: 'New notebook from an image',
    label: 'Image',
    items: labels,
    current: 0,
    okLabel: 'Open'
  });
  return result.button.accept && result.value
    ? images[labels.indexOf(result.value)]
    : undefined;
}
