/**
 * jupyter-gpu-env's frontend: the "GPU Env" sidebar, which knows none of its
 * sections, and one plugin per feature that adds its own through
 * `IGpuEnvSidebar` as a third-party extension would.
 */
import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { batchKernelsPlugin } from './batch-kernels/plugin';
import { daskPlugin } from './dask/plugin';
import { environmentsPlugin } from './environments/plugin';
import { gpuPlugin } from './gpu/plugin';
import { imagesPlugin } from './images/plugin';
import { jobsPlugin, jobsRegistryPlugin } from './jobs/plugin';
import { notificationsPlugin } from './notifications/plugin';
import { pipelinesPlugin } from './pipelines/plugin';
import { schedulesPlugin } from './schedules/plugin';
import { sidebarPlugin } from './sidebar/plugin';
import { tasksPlugin } from './tasks/plugin';

export { IGpuEnvSidebar } from './sidebar/tokens';
export type { ISidebarSection } from './sidebar/tokens';
export { ITaskTracker } from './tasks/tokens';
export { IJobsModel, IJobsRegistry } from './jobs/tokens';

const plugins: JupyterFrontEndPlugin<unknown>[] = [
  sidebarPlugin,
  tasksPlugin,
  gpuPlugin,
  environmentsPlugin,
  imagesPlugin,
  jobsRegistryPlugin,
  jobsPlugin,
  schedulesPlugin,
  pipelinesPlugin,
  notificationsPlugin,
  daskPlugin,
  batchKernelsPlugin
];

export default plugins;
