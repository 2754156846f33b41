/**
 * The batch-job calls of the REST API (`{baseUrl}gpu-env/api/jobs…`,
 * `backends`), on the shared request helper of ../api.
 */
import { ServerConnection } from '@jupyterlab/services';

import { requestApi } from '../api';
import {
  IBackendInfo,
  IBackendList,
  IJob,
  IJobList,
  IJobRequest,
  ILogChunk,
  IUsageReport,
  JobState
} from './types';

export class JobsClient {
  constructor(
    readonly serverSettings: ServerConnection.ISettings = ServerConnection.makeSettings()
  ) {}

  /** Jobs, newest first. */
  listJobs(
    options: { states?: JobState[]; limit?: number; offset?: number } = {}
  ): Promise<IJobList> {
    const query = new URLSearchParams();
    if (options.states?.length) {
      query.set('state', options.states.join(','));
    }
    if (options.limit !== undefined) {
      query.set('limit', String(options.limit));
    }
    if (options.offset !== undefined) {
      query.set('offset', String(options.offset));
    }
    const suffix = query.toString();
    return this._call('GET', suffix ? `jobs?${suffix}` : 'jobs');
  }

  getJob(id: string): Promise<IJob> {
    return this._call('GET', `jobs/${enc(id)}`);
  }

  /** Send a saved notebook to a backend: the new job (201), or a 400. */
  submit(request: IJobRequest): Promise<IJob> {
    return this._call('POST', 'jobs', request);
  }

  /** A piece of the log from a byte offset; ask again from `next_offset`. */
  log(id: string, offset: number): Promise<ILogChunk> {
    return this._call('GET', `jobs/${enc(id)}/log?offset=${offset}`);
  }

  /** Cancel a job; 409 when it has already ended. */
  cancel(id: string): Promise<IJob> {
    return this._call('POST', `jobs/${enc(id)}/cancel`);
  }

  /** Delete the record and the job's folder (a running job is cancelled). */
  async remove(id: string): Promise<void> {
    await this._call<null>('DELETE', `jobs/${enc(id)}`);
  }

  /** GPU-hours, CPU-hours and job counts over the last 7 days. */
  usage(): Promise<IUsageReport> {
    return this._call('GET', 'jobs/usage');
  }

  async backends(): Promise<IBackendInfo[]> {
    const list = await this._call<IBackendList>('GET', 'backends');
    return list.backends;
  }

  private _call<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: object
  ): Promise<T> {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { 'Content-Type': 'application/json' };
    }
    return requestApi<T>(path, init, this.serverSettings);
  }
}

function enc(part: string): string {
  return encodeURIComponent(part);
}
