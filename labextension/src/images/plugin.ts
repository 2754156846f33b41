/**
 * The `jupyter-gpu-env:images` plugin: the sidebar's "Images" section and
 * the image commands. The list is asked again whenever a task ends (a pack
 * makes an image).
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';

import { PALETTE_CATEGORY } from '../sidebar/plugin';
import { IGpuEnvSidebar } from '../sidebar/tokens';
import { TaskTracker } from '../tasks/tracker';
import { ITaskTracker } from '../tasks/tokens';
import { ImagesClient } from './client';
import { registerImageCommands } from './commands';
import { ImagesModel } from './model';
import { ImagesSection } from './section';

/** Where the section stands among the sidebar's: after Environments. */
export const IMAGES_SECTION_RANK = 300;

export const imagesPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-gpu-env:images',
  description: 'The Images section of the GPU Env sidebar and its commands.',
  autoStart: true,
  requires: [IGpuEnvSidebar, ITaskTracker],
  optional: [ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    sidebar: IGpuEnvSidebar,
    tracker: TaskTracker,
    palette: ICommandPalette | null
  ): void => {
    const { commands, serviceManager } = app;
    // Asked when shown and every 30 s while the section is visible.
    const model: ImagesModel = new ImagesModel(
      new ImagesClient(serviceManager.serverSettings),
      { visible: (): boolean => section.isVisible }
    );
    tracker.finished.connect(() => void model.refresh());
    const section: ImagesSection = new ImagesSection(model, commands);
    sidebar.addSection({
      id: 'images',
      title: 'Images',
      rank: IMAGES_SECTION_RANK,
      widget: section,
      refresh: () => model.refresh()
    });
    registerImageCommands({
      commands,
      model,
      kernelspecs: serviceManager.kernelspecs,
      palette,
      category: PALETTE_CATEGORY
    });
  }
};
