/**
 * The batch-job calls of the REST API: jobs, their logs and usage, the
 * backends, and a notebook's parameters as the server reads them.
 */
import { ApiClient, enc } from '../api/request';
import type {
  IBackendInfo,
  IBackendList,
  IJob,
  IJobList,
  IJobRequest,
  ILogChunk,
  INotebookParameters,
  IUsageReport,
  JobState
} from '../api/types';

export class JobsClient extends ApiClient {
  /** Jobs, newest first. */
  listJobs(
    options: { states?: JobState[]; limit?: number; offset?: number } = {}
  ): Promise<IJobList> {
    return this.request('GET', 'jobs', {
      query: {
        state: options.states?.length ? options.states.join(',') : undefined,
        limit: options.limit,
        offset: options.offset
      }
    });
  }

  getJob(id: string): Promise<IJob> {
    return this.request('GET', `jobs/${enc(id)}`);
  }

  /** Send a saved notebook to a backend: the new job (201), or a 400/409. */
  submit(request: IJobRequest): Promise<IJob> {
    return this.request('POST', 'jobs', { body: request });
  }

  /** A piece of the log from a byte offset; ask again from `next_offset`. */
  log(id: string, offset: number): Promise<ILogChunk> {
    return this.request('GET', `jobs/${enc(id)}/log`, { query: { offset } });
  }

  /** Cancel a job; 409 when it has already ended. */
  cancel(id: string): Promise<IJob> {
    return this.request('POST', `jobs/${enc(id)}/cancel`);
  }

  /** Delete the record and the job's folder (a running job is cancelled). */
  async remove(id: string): Promise<void> {
    await this.request<null>('DELETE', `jobs/${enc(id)}`);
  }

  /** GPU-hours, CPU-hours and job counts over the last 7 days. */
  usage(): Promise<IUsageReport> {
    return this.request('GET', 'jobs/usage');
  }

  async backends(): Promise<IBackendInfo[]> {
    return (await this.request<IBackendList>('GET', 'backends')).backends;
  }

  /** The saved notebook's `parameters` cell, read as `POST jobs` checks it. */
  notebookParameters(path: string): Promise<INotebookParameters> {
    return this.request('GET', 'notebooks/parameters', { query: { path } });
  }
}
