/**
 * The batch-job calls of the REST API: jobs, their logs and usage, sweeps
 * and their results, the backends, and a notebook's parameters as the
 * server reads them.
 */
import { ApiClient, apiUrl, enc } from '../api/request';
import type {
  IBackendInfo,
  IBackendList,
  IClusterCapacity,
  IGpuAdvice,
  IJob,
  IJobGpuSeries,
  IJobList,
  IJobRequest,
  ILogChunk,
  INotebookParameters,
  IRerunRequest,
  ISweep,
  ISweepList,
  ISweepResults,
  IUsageReport,
  IUsageWeeks,
  JobState
} from '../api/types';

export class JobsClient extends ApiClient {
  /** Jobs, newest first. */
  listJobs(
    options: {
      states?: JobState[];
      limit?: number;
      offset?: number;
      /**
       * Only the runs of this sweep, in the sweep's order; `none`: only the
       * jobs that are no sweep's run (the query parameter `group`).
       */
      sweep?: string;
      /** `none`: only the jobs of no pipeline (`pipeline`). */
      pipeline?: string;
    } = {}
  ): Promise<IJobList> {
    return this.request('GET', 'jobs', {
      query: {
        state: options.states?.length ? options.states.join(',') : undefined,
        limit: options.limit,
        offset: options.offset,
        group: options.sweep,
        pipeline: options.pipeline
      }
    });
  }

  getJob(id: string): Promise<IJob> {
    return this.request('GET', `jobs/${enc(id)}`);
  }

  /**
   * Send a saved notebook to a backend: the new job (201), or the sweep
   * when the request has `sweep` or `sweep_runs`; else a 400/409.
   */
  submit(request: IJobRequest): Promise<IJob | ISweep> {
    return this.request('POST', 'jobs', { body: request });
  }

  /**
   * Send a job (or a run of a sweep) again from its snapshot, with what
   * `changes` says changed; a sweep's run becomes a new run of its sweep.
   */
  rerun(id: string, changes: IRerunRequest): Promise<IJob> {
    return this.request('POST', `jobs/${enc(id)}/rerun`, { body: changes });
  }

  /** The `parameters` cell of the snapshot a job ran (what a rerun edits). */
  snapshotParameters(id: string): Promise<INotebookParameters> {
    return this.request('GET', `jobs/${enc(id)}/parameters`);
  }

  /** Sweeps, newest first, their runs counted per state. */
  listSweeps(
    options: { limit?: number; offset?: number; pipeline?: string } = {}
  ): Promise<ISweepList> {
    const { limit, offset, pipeline } = options;
    return this.request('GET', 'sweeps', {
      query: { limit, offset, pipeline }
    });
  }

  /** The GPU use the job's runner sampled: its series and summary. */
  gpuSeries(id: string): Promise<IJobGpuSeries> {
    return this.request('GET', `jobs/${enc(id)}/gpu`);
  }

  /** A sweep, its runs counted per state. */
  getSweep(id: string): Promise<ISweep> {
    return this.request('GET', `sweeps/${enc(id)}`);
  }

  /** Cancel the runs of a sweep still queued or running; 409 if none is. */
  cancelSweep(id: string): Promise<ISweep> {
    return this.request('POST', `sweeps/${enc(id)}/cancel`);
  }

  /** Run the failed and cancelled runs again; 409 if there is none. */
  retrySweep(id: string): Promise<ISweep> {
    return this.request('POST', `sweeps/${enc(id)}/rerun`);
  }

  /** The runs side by side: parameters, recorded values, state, duration. */
  sweepResults(id: string): Promise<ISweepResults> {
    return this.request('GET', `sweeps/${enc(id)}/results`);
  }

  /** Where the browser downloads the results as CSV (cookie-authenticated). */
  sweepResultsCsvUrl(id: string): string {
    return this._csvUrl(`sweeps/${enc(id)}/results`, {});
  }

  private _csvUrl(
    path: string,
    query: Record<string, string | number>
  ): string {
    const xsrf = document.cookie.match('\\b_xsrf=([^;]*)\\b');
    return apiUrl(this.serverSettings, path, {
      ...query,
      format: 'csv',
      _xsrf: xsrf?.[1]
    });
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

  /** GPU-hours allocated and used per week and backend, oldest first. */
  usageWeeks(weeks: number): Promise<IUsageWeeks> {
    return this.request('GET', 'jobs/usage/weeks', { query: { weeks } });
  }

  /** Where the browser downloads the weekly usage as CSV. */
  usageWeeksCsvUrl(weeks: number): string {
    return this._csvUrl('jobs/usage/weeks', { weeks });
  }

  async backends(): Promise<IBackendInfo[]> {
    return (await this.backendList()).backends;
  }

  /** The backends, and how long a GPU may idle before a warning. */
  backendList(): Promise<IBackendList> {
    return this.request('GET', 'backends');
  }

  /** Free and total GPUs and MIG slices of a backend. */
  capacity(backend: string): Promise<IClusterCapacity> {
    return this.request('GET', `backends/${enc(backend)}/capacity`);
  }

  /** The saved notebook's `parameters` cell, read as `POST jobs` checks it. */
  notebookParameters(path: string): Promise<INotebookParameters> {
    return this.request('GET', 'notebooks/parameters', { query: { path } });
  }

  /**
   * The smallest GPU or MIG slice that fits a notebook's earlier runs (or a
   * kernel's use) on `backend`, why, and where it would start soonest.
   */
  advice(
    query: { backend: string; notebook_path?: string; kernel_id?: string },
    signal?: AbortSignal
  ): Promise<IGpuAdvice> {
    return this.request('GET', 'jobs/advice', { query, signal });
  }
}
