/**
 * The token through which the task tracker is shared: environments start
 * clones and package changes, packs make images, GPU checks test them.
 */
import { Token } from '@lumino/coreutils';

import { TaskTracker } from './tracker';

/** The server's long operations, followed until they end. */
export const ITaskTracker = new Token<TaskTracker>(
  'jupyter-gpu-env:ITaskTracker',
  "The server's long operations (clone, install, pack, GPU check), followed."
);
