/**
 * The token through which the jobs plugin shares its model with other plugins.
 */
import { Token } from '@lumino/coreutils';

import { JobsModel } from './model';

/** The polled list of batch jobs (provided by `jupyter-gpu-env:jobs`). */
export const IJobsModel = new Token<JobsModel>(
  'jupyter-gpu-env:IJobsModel',
  'The batch jobs of this server, polled.'
);
